// Package diffcmd implements `weir diff kustomization NAME --path DIR`: it
// renders the local directory as `weir build` does, server-side dry-runs
// every object against the cluster as the controller would apply it (field
// manager kustomize-controller, owner labels), and prints what would be
// created, changed (a unified diff of the object) or pruned. Unlike flux, it
// works before the Kustomization exists: everything is then "created".
//
// Exit codes: 0 no change, 1 changes, 2 or more an error.
package diffcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/cli/buildcmd"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/livediff"
)

// NewCommand returns `weir diff`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	base := baseOptions{}
	cmd := &cobra.Command{
		Use:   "diff --base REV [--head REV] [DIR]",
		Short: "Show what applying a local directory would change in the cluster, or what a change to the repository would",
		Long: `diff --base renders every Kustomization and HelmRelease of the fleet
repository holding DIR (default: the current directory) at two revisions,
offline, with the controllers' own build code, and prints per Kustomization
the objects created, changed (a unified diff, Secret values masked) and
deleted, then the dangers: objects prune will delete, namespaces and CRDs
deleted, immutable-field changes that need a recreate, Kustomizations
removed with prune: true. Only Kustomizations whose inputs changed are
built twice. The head is the working tree unless --head names a revision.

The subcommands diff one Kustomization or HelmRelease against the cluster.

Exit status: 0 no differences, 1 differences found, 2 or more an error
(a render that failed on either side too, after the report).`,
		Example: `  # What a pull request changes, as a PR comment
  weir diff --base origin/main --head HEAD -o markdown

  # What the uncommitted changes do to clusters/prod
  weir diff --base HEAD --path clusters/prod`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if base.base == "" {
				return &output.ExitError{Code: 2, Err: errors.New("--base is required (or diff one object: weir diff kustomization|helmrelease)")}
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return exitStatus(runBase(c.Context(), streams.Out, streams.ErrOut, dir, base))
		},
	}
	base.addFlags(cmd)
	opts := ksOptions{}
	ks := &cobra.Command{
		Use:     "kustomization NAME [--path DIR]",
		Aliases: []string{"ks"},
		Short:   "Diff a Kustomization built from a local directory or generated artifact against the cluster",
		Long: `diff builds the local directory given by --path as the controller would, runs
a server-side dry-run of every object against the cluster, and prints the
objects that would be created, changed (with a diff) or deleted by pruning.
The Kustomization need not exist yet (use --kustomization-file); with
--ignore-not-found a Kustomization missing from the cluster is no error.
--progress-bar (default true) prints what is being done on stderr while it
runs, when stderr is a terminal; --progress-bar=false never does.
Without --path, a Kustomization of an ExternalArtifact is built from the
tree the local repository's ArtifactGenerator writes, as build does (see
weir build kustomization --help).

Exit status: 0 no differences, 1 differences found, 2 or more an error.`,
		Example: `  # Preview a change before pushing it
  weir diff kustomization apps --path ./apps/dev`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return exitStatus(run(ctx, streams, deps, args[0], opts))
		},
	}
	opts.AddFlags(ks)
	ks.Flags().BoolVar(&opts.ignoreNotFound, "ignore-not-found", false,
		"do not fail when the Kustomization is not found in the cluster: print nothing and exit 0")
	ks.Flags().BoolVar(&opts.progressBar, "progress-bar", true, "Boolean to set the progress bar. The default value is true.")
	cmd.AddCommand(ks, newHelmReleaseCommand(streams, deps), newArtifactCommand(streams, deps))
	return cmd
}

// ksOptions are the flags of `diff kustomization`: build's, and two of its
// own.
type ksOptions struct {
	buildcmd.Options
	ignoreNotFound bool
	progressBar    bool
}

// run prints the changes and reports whether there are any.
func run(ctx context.Context, streams genericiooptions.IOStreams, deps *clideps.Deps, name string, opts ksOptions) (bool, error) {
	c, err := deps.Client()
	if err != nil {
		return false, err
	}
	if opts.KustomizationFile == "" {
		// Render reads the Kustomization itself; a missing one is an error
		// there. With a file it need not exist.
		if err := c.Get(ctx, client.ObjectKey{Namespace: deps.Namespace(), Name: name}, &kustomizev1.Kustomization{}); err != nil {
			if opts.ignoreNotFound && apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("Kustomization %s/%s: %w", deps.Namespace(), name, err) //nolint:staticcheck // the kind leads
		}
	}
	progress := progressOn(streams.ErrOut, opts.progressBar)
	from := opts.Path
	if from == "" {
		from = "its generated ExternalArtifact"
	}
	progress.Waitingf("building Kustomization %s/%s from %s", deps.Namespace(), name, from)
	built, err := buildcmd.RenderTree(ctx, deps, name, opts.Options)
	if err != nil {
		return false, err
	}
	changed := false
	for _, b := range built {
		key := client.ObjectKeyFromObject(b.Kustomization)
		progress.Waitingf("diffing %d objects of Kustomization %s against the cluster", len(b.Objects), key)
		res, err := livediff.Kustomization(ctx, c, key, b.Objects)
		res.Print(streams.Out)
		changed = changed || res.HasChanges()
		if err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// progressOn returns where diff's progress goes: w when enabled and w is a
// terminal (a spinner in flux, lines here), else nowhere, so that piped or
// captured output stays the report alone.
func progressOn(w io.Writer, enabled bool) output.Progress {
	if f, ok := w.(*os.File); enabled && ok && term.IsTerminal(int(f.Fd())) {
		return output.Progress{W: w}
	}
	return output.Progress{W: io.Discard}
}

// exitStatus maps a diff's outcome to the exit codes of `diff`: 0 no
// differences, 1 differences, 2 an error.
func exitStatus(changed bool, err error) error {
	if err != nil {
		return &output.ExitError{Code: 2, Err: err}
	}
	if changed {
		return &output.ExitError{Code: 1}
	}
	return nil
}
