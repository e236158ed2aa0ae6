package lintcmd

import (
	"context"
	"fmt"
	"os"
	"path"
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
	// Root is the directory spec.path is relative to (--root); empty
	// means the Git work tree holding DIR, else DIR.
	Root string
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

A spec.path is relative to the root of its source, as in the cluster: when DIR lies inside a Git work
tree, paths resolve against the work tree's root (the directory holding .git) and the entry points are
looked for inside DIR, DIR itself being one when it holds none; --root names another root, such as the
directory an OCI artifact is pushed from. Files are named relative to that root.

Exit status: 0 no error, 1 errors found, 2 the repository could not be analysed.`,
		Example: `  # Lint every cluster of the repository in the current directory
  weir lint

  # One cluster, a second repository standing for the GitRepository apps, with the age key
  weir lint --path clusters/prod --source flux-system/apps=../apps --decrypt-key age.agekey

  # One cluster directory of a Git repository: spec.path resolves from the repository's root
  weir lint clusters/staging

  # Annotations for a GitHub workflow, or the graph as Mermaid
  weir lint -o github
  weir lint --graph -o mermaid`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := "."
			if opts.Root != "" {
				dir = opts.Root
			}
			if len(args) == 1 {
				dir = args[0]
			}
			return Run(c.Context(), streams, dir, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Paths, "path", nil, "entry point to start from, relative to DIR (repeatable; default: every one found in DIR)")
	f.StringVar(&opts.Root, "root", "", "the directory spec.path is relative to, the source's root (default: the Git work tree holding DIR, else DIR)")
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
	root, within, err := o.repository(dir)
	if err != nil {
		return fo, err
	}
	if root != "" {
		fo.Dir, fo.Within, fo.Paths = root, within, nil
		for _, p := range o.Paths {
			if !filepath.IsAbs(p) {
				p = path.Join(within, filepath.ToSlash(p))
			}
			fo.Paths = append(fo.Paths, p)
		}
	}
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

// repository returns the root spec.path resolves against, --root or the
// Git work tree holding dir, and dir relative to it; root is "" when
// there is neither: dir is the repository, as it always was outside Git.
func (o *Options) repository(dir string) (root, within string, err error) {
	if o.Root == "" {
		if root, err = fleet.WorkTreeRoot(dir); err != nil || root == "" {
			return "", "", err
		}
	} else if root, err = realPath(o.Root); err != nil {
		return "", "", fmt.Errorf("--root: %w", err)
	}
	resolved, err := realPath(dir)
	if err != nil {
		return "", "", fmt.Errorf("repository %s: %w", dir, err)
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("%s is not inside --root %s", dir, o.Root)
	}
	return root, filepath.ToSlash(rel), nil
}

// realPath is p absolute, its symlinks resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
