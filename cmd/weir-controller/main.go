// Command weir-controller runs weir's controllers (all of them, or the set
// --controllers picks) against the cluster KUBECONFIG or the in-cluster
// service account points at.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/app"
)

func main() {
	opts := app.DefaultOptions()
	fs := pflag.NewFlagSet("weir-controller", pflag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts); err != nil {
		fmt.Fprintf(os.Stderr, "weir-controller: %v\n", err)
		os.Exit(1)
	}
}
