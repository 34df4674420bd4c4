// The decoder galaxy ran, for test/e2e/go-decoder.test.ts: each line of stdin is one JSON text,
// decoded by Go's encoding/json into one of kube-scheduler's extender messages (argv[1]: `args`,
// ExtenderArgs, a filter or prioritize request; `preemption`, ExtenderPreemptionArgs; `binding`,
// ExtenderBindingArgs), with k8s.io/api v1.20's Pod and NodeList, as galaxy decoded them; each line
// of stdout is "ok" or the decoder's error, as a JSON string. Built inside the Kubernetes v1.20.2
// source tree, whose vendor directory supplies k8s.io/api.
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

type victims struct {
	Pods             []*v1.Pod
	NumPDBViolations int64
}

type metaPod struct {
	UID string
}

type metaVictims struct {
	Pods             []*metaPod
	NumPDBViolations int64
}

type extenderPreemptionArgs struct {
	Pod                   *v1.Pod
	NodeNameToVictims     map[string]*victims
	NodeNameToMetaVictims map[string]*metaVictims
}

type extenderBindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       string
	Node         string
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	message := map[string]func() interface{}{
		"args":       func() interface{} { return &extenderArgs{} },
		"preemption": func() interface{} { return &extenderPreemptionArgs{} },
		"binding":    func() interface{} { return &extenderBindingArgs{} },
	}[os.Args[1]]
	for in.Scan() {
		if err := json.Unmarshal(in.Bytes(), message()); err != nil {
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
