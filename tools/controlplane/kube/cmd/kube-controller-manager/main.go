// Command kube-controller-manager is the upstream Kubernetes controller
// manager, so that Deployments, ReplicaSets and Jobs behave as in a cluster.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
