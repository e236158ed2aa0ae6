package dev

import (
	"context"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/treecmd"
)

// printTree runs `weir tree kustomization flux-system` against the dev
// cluster: the objects flux-system applied, and under each Kustomization it
// applied, what that one applied in turn. It is the tree command itself, so
// what weir dev shows is what a user gets by running it.
func printTree(ctx context.Context, kubeconfig string, out, errOut io.Writer) error {
	kube := genericclioptions.NewConfigFlags(false)
	ns := namespace
	kube.KubeConfig, kube.Namespace = &kubeconfig, &ns
	deps := &clideps.Deps{Kube: kube, Timeout: time.Minute}
	cmd := treecmd.NewCommand(genericiooptions.IOStreams{Out: out, ErrOut: errOut}, deps)
	cmd.SetArgs([]string{"kustomization", syncName})
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.ExecuteContext(ctx)
}
