package diffcmd

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/cli/buildcmd"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/controller/helmrelease"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/ssa"
)

// newHelmReleaseCommand returns `weir diff helmrelease`.
func newHelmReleaseCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	opts := buildcmd.HelmReleaseOptions{}
	cmd := &cobra.Command{
		Use:     "helmrelease NAME",
		Aliases: []string{"hr"},
		Short:   "Diff a HelmRelease rendered as the controller would against the cluster",
		Long: `diff renders a HelmRelease as ` + "`weir build helmrelease`" + ` does, runs a server-side
dry-run of every object against the cluster, and prints the objects that
would be created, changed (with a diff, Secret values masked) or deleted
(in the current release, no longer rendered). CRDs are compared when the
CRD policy would write them.

Exit status: 0 no differences, 1 differences found, 2 or more an error.`,
		Example: `  # Preview a values change before pushing it
  weir diff hr podinfo -n apps --file ./apps/podinfo/release.yaml --chart-dir ./charts/podinfo`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return exitStatus(runHelmRelease(ctx, streams.Out, deps, args[0], opts))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// runHelmRelease prints the changes and reports whether there are any.
func runHelmRelease(ctx context.Context, w io.Writer, deps *clideps.Deps, name string, opts buildcmd.HelmReleaseOptions) (bool, error) {
	hr, err := buildcmd.RenderHelmRelease(ctx, deps, name, opts)
	if err != nil {
		return false, err
	}
	if hr.Client == nil {
		_, err := deps.Client()
		return false, err
	}
	r := hr.Rendered
	objects, err := crdsToWrite(ctx, hr.Client, r)
	if err != nil {
		return false, err
	}
	objects = append(objects, r.Objects...)
	rendered, changed, err := report(ctx, w, hr.Client, objects, helmrelease.ControllerName)
	if err != nil {
		return changed, err
	}
	deleted, err := releaseDeletes(hr, rendered)
	if err != nil {
		return changed, err
	}
	return reportDeleted(w, deleted) || changed, nil
}

// crdsToWrite are the rendered CRDs the policy would apply: every one
// under CreateReplace, the missing ones under Create.
func crdsToWrite(ctx context.Context, c client.Client, r *release.Rendered) ([]*unstructured.Unstructured, error) {
	if r.CRDPolicy == helmv2.CreateReplace {
		return r.CRDs, nil
	}
	var out []*unstructured.Unstructured
	for _, crd := range r.CRDs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(crd.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), live)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, crd)
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s: %w", crd.GetName(), err)
		}
	}
	return out, nil
}

// releaseDeletes lists the objects of the current release's manifest that
// the render no longer has: the upgrade would delete them.
func releaseDeletes(hr *buildcmd.HelmRelease, rendered map[ssa.ObjMetadata]bool) ([]string, error) {
	if hr.Current == nil {
		return nil, nil
	}
	objects, err := release.ManifestObjects(hr.Current, release.Namespaced(hr.Client.IsObjectNamespaced, hr.Rendered.CRDs))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objects {
		if id := ssa.ObjMetadataOf(o); !rendered[id] {
			out = append(out, id.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
