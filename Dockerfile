# floatip's image. Build: `docker build -t floatip:0.1.0 .` (or, with no container engine,
# `npm run image`, which assembles the same runtime stage into an OCI archive with umoci).
#
# build: every dependency (TypeScript, esbuild), compiles dist/ (the service and the dashboard). deps: production dependencies only.
# runtime: Node.js 20, the compiled service, production node_modules, crds/ and openapi/ (read at
# run time); runs as a non-root user and needs nothing writable (readOnlyRootFilesystem works).
# node is PID 1: floatip handles SIGTERM itself (it finishes its binds, hands the Lease on, exits).
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY bench bench
COPY web web
RUN npm run build --silent

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY crds crds
COPY openapi openapi
COPY --from=deps /app/node_modules node_modules
COPY --from=build /src/dist/src dist/src
COPY --from=build /src/dist/dashboard dist/dashboard
USER 10001:10001
EXPOSE 9040 9041 9042
ENTRYPOINT ["node", "/app/dist/src/main.js"]
CMD ["serve"]
