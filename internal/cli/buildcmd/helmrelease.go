package buildcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/view/livediff"
)

// HelmReleaseOptions are the flags shared by `build helmrelease` and
// `diff helmrelease`.
type HelmReleaseOptions struct {
	// File is a local YAML file holding the HelmRelease, used instead of
	// the cluster's.
	File string
	// ChartDir is a local chart directory, used instead of the chart of
	// the HelmRelease's source.
	ChartDir string
}

// AddFlags registers the options on cmd.
func (o *HelmReleaseOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.File, "file", "", "path to a local file holding the HelmRelease, instead of the cluster's")
	cmd.Flags().StringVar(&o.ChartDir, "chart-dir", "", "path to a local chart directory, instead of the chart of the HelmRelease's source in the cluster")
}

func newHelmReleaseCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	opts := HelmReleaseOptions{}
	cmd := &cobra.Command{
		Use:     "helmrelease NAME",
		Aliases: []string{"hr"},
		Short:   "Render what a HelmRelease would apply",
		Long: `build renders a HelmRelease as the controller would install or upgrade it:
the same values merge (valuesFrom, then values), post-renderers and
commonMetadata, through the code the controller runs, and prints the CRDs
(by the CRD policy), the objects and the hooks as multi-document YAML.
Secret values are masked.

The HelmRelease comes from the cluster, or from --file; the chart is the one
the controller would install now (the current artifact of its HelmChart or
chartRef source, digest verified), or --chart-dir; when that source is
missing or has no artifact yet, the chart of the release's newest Helm
storage record (said on stderr). valuesFrom is always read from the cluster.`,
		Example: `  # What the release in the cluster would get from a local chart
  weir build hr podinfo -n apps --chart-dir ./charts/podinfo

  # A local HelmRelease with a local chart
  weir build hr podinfo -n apps --file ./apps/podinfo/release.yaml --chart-dir ./charts/podinfo`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			hr, err := RenderHelmRelease(ctx, deps, args[0], opts)
			if err != nil {
				return err
			}
			NoteChart(streams.ErrOut, hr)
			r := hr.Rendered
			objects := append(append(append([]*unstructured.Unstructured{}, r.CRDs...), r.Objects...), r.Hooks...)
			return Print(streams.Out, Mask(objects))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// RenderHelmRelease loads the HelmRelease (from the cluster or --file) and
// renders it with livediff.RenderHelmRelease, the controller's
// release.Render.
func RenderHelmRelease(ctx context.Context, deps *clideps.Deps, name string, opts HelmReleaseOptions) (*livediff.HelmRelease, error) {
	c, clientErr := deps.Client()
	if opts.File == "" && clientErr != nil {
		return nil, clientErr
	}
	obj, err := loadHelmRelease(ctx, c, deps.Namespace(), name, opts.File)
	if err != nil {
		return nil, err
	}
	if len(obj.Spec.ValuesFrom) > 0 && clientErr != nil {
		ref := obj.Spec.ValuesFrom[0]
		return nil, fmt.Errorf("HelmRelease %s/%s: valuesFrom %s/%s must be read from the cluster: %w", obj.Namespace, obj.Name, ref.Kind, ref.Name, clientErr)
	}
	var cfg *rest.Config
	if clientErr == nil {
		if cfg, err = deps.RESTConfig(); err != nil {
			if opts.ChartDir == "" {
				return nil, err
			}
			cfg = nil
		}
	} else {
		c = nil
	}
	return livediff.RenderHelmRelease(ctx, c, cfg, obj, livediff.RenderOptions{ChartDir: opts.ChartDir, ChartDirFlag: "--chart-dir"})
}

// NoteChart says on w (stderr) when the chart rendered is the current
// release's because its source is missing or has no artifact: a new chart
// version cannot show then.
func NoteChart(w io.Writer, hr *livediff.HelmRelease) {
	if hr.FromStorage {
		_, _ = fmt.Fprintf(w, "◎ rendered with %s: a new chart version would not show\n", hr.ChartFrom)
	}
}

// loadHelmRelease reads the HelmRelease from file, or from the cluster.
func loadHelmRelease(ctx context.Context, reader client.Reader, namespace, name, file string) (*helmv2.HelmRelease, error) {
	obj := &helmv2.HelmRelease{}
	if file == "" {
		key := client.ObjectKey{Namespace: namespace, Name: name}
		if err := reader.Get(ctx, key, obj); err != nil {
			return nil, fmt.Errorf("HelmRelease %s: %w", key, err) //nolint:staticcheck // the kind leads, as in flux
		}
		return obj, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading --file: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, fmt.Errorf("--file %s: %w", file, err)
	}
	switch {
	case obj.Kind != helmv2.HelmReleaseKind:
		return nil, fmt.Errorf("--file %s holds a %q, not a HelmRelease", file, obj.Kind)
	case obj.Name != name:
		return nil, fmt.Errorf("--file %s holds HelmRelease %q, not %q", file, obj.Name, name)
	case obj.Spec.Chart == nil && obj.Spec.ChartRef == nil:
		return nil, errors.New("--file " + file + ": either chart or chartRef must be set")
	}
	if obj.Namespace == "" {
		obj.Namespace = namespace
	}
	return obj, nil
}
