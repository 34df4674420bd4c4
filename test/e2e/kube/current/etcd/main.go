// Command etcd is the etcd server that k8s.io/kubernetes requires (go.etcd.io/etcd/server/v3), built
// here because Debian's etcd 3.4 is older than any etcd a current kube-apiserver is tested against.
// It is the upstream binary's main, unchanged.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
