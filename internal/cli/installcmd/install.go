package installcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/install/manifests"
	"github.com/weir-gitops/weir/internal/version"
)

type options struct {
	export       bool
	force        bool
	manifestsDir string
	gen          manifests.Options
}

// NewCommand returns `weir install`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{gen: manifests.DefaultOptions(version.Version)}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install or upgrade weir",
		Long: `The install command deploys weir's controllers in the namespace -n names
(flux-system by default), or upgrades them, with server-side apply.

Only the components weir has controllers for are installed: source-controller,
kustomize-controller, helm-controller, notification-controller and, with
--components-extra, image-reflector-controller, image-automation-controller,
source-watcher (ArtifactGenerators) and weir's web UI (ui). --components and
--components-extra accept every name flux install accepts.`,
		Example: `  # Install weir with its default components
  weir install

  # Print the manifests instead, to commit or to patch with kustomize
  weir install --export > gotk-components.yaml

  # One Deployment for every controller
  weir install --layout=single`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			o.gen.Namespace = deps.Namespace()
			return run(ctx, o, streams, deps, c.Flags().Changed("manifests"))
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.export, "export", false, "write the install manifests to stdout and exit")
	f.BoolVar(&o.force, "force", false, "install even if the cluster is bootstrapped (its Kustomization will undo what install changes)")
	o.gen.BindFlags(f)
	f.StringVar(&o.manifestsDir, "manifests", "", "install the YAML files of this directory instead of the generated manifests")
	return cmd
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps, fromDir bool) error {
	p := output.Progress{W: streams.ErrOut}
	if !o.export {
		fmt.Fprintln(streams.ErrOut, "✚ generating manifests")
	}
	objs, components, err := build(o, p, fromDir && !o.export)
	if err != nil {
		return err
	}
	if o.export {
		return export(streams.Out, objs, components)
	}
	pullSecret, err := o.gen.PullSecret()
	if err != nil {
		return err
	}
	if pullSecret != nil {
		objs = append([]*unstructured.Unstructured{pullSecret}, objs...)
	}
	p.Successf("manifests build completed")
	ns := o.gen.Namespace
	p.Actionf("installing components in %q namespace", ns)
	c, err := deps.Client()
	if err != nil {
		return err
	}
	if bootstrapped, v, err := install.Bootstrapped(ctx, c); err != nil {
		return err
	} else if bootstrapped && !o.force {
		return fmt.Errorf("this cluster has already been bootstrapped with weir %s! Please use 'weir bootstrap' to upgrade", v)
	}
	if err := install.Apply(ctx, c, objs, install.ApplyOptions{Timeout: deps.Timeout, Poll: deps.Poll()}); err != nil {
		return err
	}
	if deps.Verbose {
		for _, obj := range objs {
			fmt.Fprintln(streams.ErrOut, install.ObjectRef(obj))
		}
	}
	p.Successf("install completed")
	p.Waitingf("verifying installation")
	deployments := deploymentsIn(objs, ns)
	err = install.WaitDeployments(ctx, c, ns, deployments, deps.Poll(), func(name string) {
		p.Successf("%s: deployment ready", name)
	})
	if err != nil {
		p.Failuref("%v", err)
		return &output.ExitError{Code: 1, Err: fmt.Errorf("install failed")}
	}
	p.Successf("install finished")
	return nil
}

// build returns the objects to install and the components they run.
func build(o *options, p output.Progress, fromDir bool) ([]*unstructured.Unstructured, []string, error) {
	if fromDir {
		objs, err := manifests.ReadDir(o.manifestsDir)
		if err != nil {
			return nil, nil, err
		}
		return objs, deploymentsIn(objs, o.gen.Namespace), nil
	}
	components, skipped, err := o.gen.Selected()
	if err != nil {
		return nil, nil, err
	}
	if !o.export {
		for _, s := range skipped {
			p.Warningf("%s: weir has no controller for this component yet, skipped", s)
		}
	}
	objs, err := manifests.Generate(o.gen)
	if err != nil {
		return nil, nil, err
	}
	return objs, components, nil
}

func export(w io.Writer, objs []*unstructured.Unstructured, components []string) error {
	if _, err := io.WriteString(w, manifests.Header(version.Version, components)); err != nil {
		return err
	}
	return manifests.Encode(w, objs)
}

// deploymentsIn returns the names of the Deployments of objs in ns, in
// their order.
func deploymentsIn(objs []*unstructured.Unstructured, ns string) []string {
	var out []string
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" && strings.HasPrefix(obj.GetAPIVersion(), "apps/") &&
			(obj.GetNamespace() == ns || obj.GetNamespace() == "") {
			out = append(out, obj.GetName())
		}
	}
	return out
}
