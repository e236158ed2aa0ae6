// Package pushcmd implements `weir push artifact`: a local directory or file
// packed as Flux packs it (internal/source/oci.BuildTarball and
// ArtifactImage) and pushed to an OCI registry, so an OCIRepository, weir's
// or Flux's, can pull it.
package pushcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/registryflags"
	"github.com/weir-gitops/weir/internal/source/oci"
)

type options struct {
	registry                       registryflags.Flags
	path, source, revision, output string
	annotations, ignorePaths       []string
	reproducible                   bool
}

// Result is what -o json|yaml prints, the fields flux prints.
type Result struct {
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	Digest     string `json:"digest"`
	URL        string `json:"url"`
}

// NewCommand returns `weir push`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{Use: "push", Short: "Push artifacts to an OCI registry"}
	o := &options{}
	art := &cobra.Command{
		Use:   "artifact oci://REPO:TAG --path DIR --source URL --revision REV",
		Short: "Push a directory or file as a Flux OCI artifact",
		Example: `  # Push the manifests of the current commit
  weir push artifact oci://ghcr.io/org/app:$(git rev-parse --short HEAD) \
    --path=./deploy --source="$(git config --get remote.origin.url)" \
    --revision="$(git branch --show-current)@sha1:$(git rev-parse HEAD)"`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return run(c, streams, deps, o, args[0])
		},
	}
	f := art.Flags()
	f.StringVar(&o.path, "path", "", "path to the directory or file to push")
	f.StringVar(&o.source, "source", "", "the source address, e.g. the Git URL")
	f.StringVar(&o.revision, "revision", "", "the source revision in the format '<branch|tag>@sha1:<commit-sha>'")
	f.StringArrayVarP(&o.annotations, "annotations", "a", nil, "set custom OCI annotations in the format '<key>=<value>'")
	f.StringSliceVar(&o.ignorePaths, "ignore-paths", nil, "set paths to ignore in .gitignore format")
	f.BoolVar(&o.reproducible, "reproducible", false, "ensure reproducible image digests by setting the created timestamp to '1970-01-01T00:00:00Z'")
	o.registry.AddFlags(f)
	f.StringVarP(&o.output, "output", "o", "", "the format in which the artifact digest should be printed, can be 'json' or 'yaml'")
	cmd.AddCommand(art)
	return cmd
}

func run(c *cobra.Command, streams genericiooptions.IOStreams, deps *clideps.Deps, o *options, url string) error {
	if o.path == "" {
		return fmt.Errorf("invalid path: --path is required")
	}
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("output format %q not supported, can be 'json' or 'yaml'", o.output)
	}
	ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
	defer cancel()
	ref, ropts, err := o.registry.Reference(ctx, url)
	if err != nil {
		return err
	}
	ann := map[string]string{}
	for _, a := range o.annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return fmt.Errorf("invalid annotation %q, must be in the format '<key>=<value>'", a)
		}
		ann[k] = v
	}
	content, err := oci.BuildTarball(ctx, o.path, oci.BuildOptions{IgnorePaths: o.ignorePaths})
	if err != nil {
		return err
	}
	created := deps.Clock()
	if o.reproducible {
		created = oci.ReproducibleTime
	}
	img, err := oci.ArtifactImage(content, oci.Metadata{Source: o.source, Revision: o.revision, Created: created, Annotations: ann})
	if err != nil {
		return err
	}
	if o.output == "" {
		output.Progress{W: streams.ErrOut}.Generatef("pushing artifact to %s", ref.String())
	}
	if err := remote.Write(ref, img, ropts...); err != nil {
		return fmt.Errorf("pushing artifact to %s: %w", ref.String(), err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("computing digest: %w", err)
	}
	res := Result{Repository: ref.Context().Name(), Digest: digest.String(),
		URL: ref.Context().Digest(digest.String()).String()}
	if t, ok := ref.(name.Tag); ok {
		res.Tag = t.TagStr()
	}
	return printResult(streams, o.output, res)
}

func printResult(streams genericiooptions.IOStreams, format string, res Result) error {
	if format == "" {
		output.Progress{W: streams.ErrOut}.Successf("artifact successfully pushed to %s", res.URL)
		return nil
	}
	return output.WriteValue(streams.Out, format, res)
}
