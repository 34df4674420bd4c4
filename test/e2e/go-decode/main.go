// The decoder galaxy ran, for test/e2e/go-decoder.test.ts: each line of stdin is one JSON text,
// decoded by Go's encoding/json into kube-scheduler's ExtenderArgs (k8s.io/api v1.20's Pod and
// NodeList, as galaxy decoded a filter or prioritize request); each line of stdout is "ok" or the
// decoder's error, as a JSON string. Built inside the Kubernetes v1.20.2 source tree, whose vendor
// directory supplies k8s.io/api.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
)

type extenderArgs struct {
	Pod       *v1.Pod
	Nodes     *v1.NodeList
	NodeNames *[]string
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var args extenderArgs
		if err := json.Unmarshal(in.Bytes(), &args); err != nil {
			fmt.Fprintf(out, "%q\n", err.Error())
		} else {
			fmt.Fprintln(out, `"ok"`)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
