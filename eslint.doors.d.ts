// Types of eslint.doors.js, for the test that keeps it and the README the same.
export declare const DOORS: Readonly<Record<string, readonly string[]>>;
export declare const MODULES: readonly string[];
export declare const EVERY_ROOM: readonly string[];
export declare const CORE_PACKAGES: readonly string[];
export declare function doorRules(): object[];
