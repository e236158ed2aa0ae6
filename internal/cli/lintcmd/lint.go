package lintcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/fleet/lint"
)

// Options are the flags of `weir lint`.
type Options struct {
	Paths                []string
	Sources              []string
	SourceURLs           []string
	DecryptKeys          []string
	Assume               []string
	NoRemoteBases        bool
	NoCrossNamespaceRefs bool
	Output               string
	Graph                bool
}

// NewCommand returns `weir lint`.
func NewCommand(streams genericiooptions.IOStreams, _ *clideps.Deps) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "lint [DIR]",
		Short: "lint checks a fleet repository offline: the graph of Kustomizations each cluster would get",
		Long: `The lint command builds every cluster of a fleet repository as the controllers would, offline:
from each entry point (--path, or every directory a root Kustomization syncs and every clusters/*
directory), it builds the root, follows the Kustomizations, HelmReleases and sources the build yields,
builds each Kustomization whose source is this repository with its postBuild variables (substituteFrom
read from the objects the graph itself applies) and SOPS decryption (--decrypt-key), and repeats.
Then it checks the graph: dependency cycles, dangling dependsOn, missing sources and paths, build and
substitution failures, substitution races, encrypted content without decryption, the toolkit in a
prune inventory, objects applied twice, removed API versions, dependencies that do not gate on health.
Remote bases are never fetched. Rule ids, and how to fix each, are in weir's docs/lint.md.

Exit status: 0 no error, 1 errors found, 2 the repository could not be analysed.`,
		Example: `  # Lint every cluster of the repository in the current directory
  weir lint

  # One cluster, a second repository standing for the GitRepository apps, with the age key
  weir lint --path clusters/prod --source flux-system/apps=../apps --decrypt-key age.agekey

  # Annotations for a GitHub workflow, or the graph as Mermaid
  weir lint -o github
  weir lint --graph -o mermaid`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return Run(c.Context(), streams, dir, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Paths, "path", nil, "entry point to start from, relative to DIR (repeatable; default: every one found)")
	f.StringArrayVar(&opts.Sources, "source", nil, "NAME=DIR or NAMESPACE/NAME=DIR: a directory standing for another source's artifact (repeatable)")
	f.StringArrayVar(&opts.SourceURLs, "source-url", nil, "a URL that means this repository, besides its Git remotes (repeatable)")
	f.StringArrayVar(&opts.DecryptKeys, "decrypt-key", nil, "age (or .asc PGP) private key file to decrypt SOPS content with (repeatable)")
	f.StringArrayVar(&opts.Assume, "assume", nil, "KIND/NAMESPACE/NAME of an object the cluster holds outside Git, such as a source bootstrap creates (repeatable)")
	f.BoolVar(&opts.NoRemoteBases, "no-remote-bases", false, "judge as a controller running with --no-remote-bases: remote bases are errors")
	f.BoolVar(&opts.NoCrossNamespaceRefs, "no-cross-namespace-refs", false, "judge as a controller running with --no-cross-namespace-refs")
	f.StringVarP(&opts.Output, "output", "o", "", "output format: "+strings.Join(lint.Formats, "|")+" (default text), or with --graph "+strings.Join(lint.GraphFormats, "|")+" (default dot)")
	f.BoolVar(&opts.Graph, "graph", false, "print the graph (sources, Kustomizations, HelmReleases, dependsOn) instead of findings")
	return cmd
}

// Run lints the repository at dir.
func Run(ctx context.Context, streams genericiooptions.IOStreams, dir string, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	fo, err := opts.fleetOptions(dir)
	if err != nil {
		return &output.ExitError{Code: 2, Err: err}
	}
	g, err := fleet.Load(ctx, fo)
	if err != nil {
		return &output.ExitError{Code: 2, Err: err}
	}
	if opts.Graph {
		if err := lint.WriteGraph(streams.Out, opts.Output, lint.Graphs(g)); err != nil {
			return &output.ExitError{Code: 2, Err: err}
		}
		return nil
	}
	findings := lint.Run(g, lint.Options{NoRemoteBases: opts.NoRemoteBases, NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs})
	if err := lint.Write(streams.Out, opts.Output, findings); err != nil {
		return &output.ExitError{Code: 2, Err: err}
	}
	if lint.Counts(findings)[lint.Error] > 0 {
		return &output.ExitError{Code: 1}
	}
	return nil
}

// fleetOptions turns the flags into the loader's options. Remote bases
// are never fetched: lint stays offline.
func (o *Options) fleetOptions(dir string) (fleet.Options, error) {
	fo := fleet.Options{Dir: dir, Paths: o.Paths, SourceURLs: o.SourceURLs, Assume: o.Assume, NoRemoteBases: true}
	for _, s := range o.Sources {
		name, d, ok := strings.Cut(s, "=")
		if !ok || name == "" || d == "" {
			return fo, fmt.Errorf("--source %q: want NAME=DIR or NAMESPACE/NAME=DIR", s)
		}
		if fo.Sources == nil {
			fo.Sources = map[string]string{}
		}
		fo.Sources[name] = d
	}
	for _, k := range o.DecryptKeys {
		data, err := os.ReadFile(k)
		if err != nil {
			return fo, fmt.Errorf("--decrypt-key: %w", err)
		}
		name := filepath.Base(k)
		if filepath.Ext(name) != ".asc" && filepath.Ext(name) != ".agekey" {
			name += ".agekey"
		}
		if fo.DecryptKeys == nil {
			fo.DecryptKeys = map[string][]byte{}
		}
		fo.DecryptKeys[name] = data
	}
	return fo, nil
}
