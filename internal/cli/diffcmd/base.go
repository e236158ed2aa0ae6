package diffcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/fleet/fleetdiff"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/source/git"
)

// workingTree labels the head side when --head is not given.
const workingTree = "working tree"

// baseOptions are the flags of `weir diff --base`.
type baseOptions struct {
	base, head, output string
	paths, sources     []string
	decryptKeys        []string
	noRemoteBases      bool
}

func (o *baseOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "", "the revision to compare with, as git understands it (main, v1.2.0, HEAD~1, a commit)")
	f.StringVar(&o.head, "head", "", "the revision to compare (default: the working tree, uncommitted changes included)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(fleetdiff.Formats, "|"))
	f.StringArrayVar(&o.paths, "path", nil, "an entry point, relative to DIR (repeatable; default: every one found, e.g. clusters/*)")
	f.StringArrayVar(&o.sources, "source", nil, "NAME=DIR: the directory standing for source NAME ([namespace/]name) when it is not this repository (repeatable)")
	f.StringArrayVar(&o.decryptKeys, "decrypt-key", nil, "an age (.agekey) or PGP (.asc) private key file to decrypt SOPS content with (repeatable)")
	f.BoolVar(&o.noRemoteBases, "no-remote-bases", false, "refuse remote kustomize bases instead of fetching them")
}

// sides are the two trees compared and how they are labelled.
type sides struct {
	// baseDir and headDir are the roots of the two trees: spec.path is
	// relative to them, as to the GitRepository's artifact.
	baseDir, headDir string
	// within is the directory given, relative to the roots ("" for the
	// root itself): where the entry points are looked for.
	within           string
	baseRev, headRev string
	sourceURLs       []string
	cleanup          func()
}

// runBase renders the fleet in dir at --base and at --head (or in the
// working tree) and prints what changes. It reports whether anything
// does; a render failure on either side is an error after the report.
func runBase(ctx context.Context, out, progress io.Writer, dir string, o baseOptions) (bool, error) {
	if !slices.Contains(fleetdiff.Formats, o.output) {
		return false, fmt.Errorf("unknown output format %q (want one of %s)", o.output, strings.Join(fleetdiff.Formats, ", "))
	}
	lopts, err := o.loadOptions()
	if err != nil {
		return false, err
	}
	s, err := checkout(dir, o.base, o.head)
	if err != nil {
		return false, err
	}
	defer s.cleanup()
	lopts.SourceURLs, lopts.Within = s.sourceURLs, s.within
	for i, p := range lopts.Paths {
		if !filepath.IsAbs(p) {
			lopts.Paths[i] = path.Join(s.within, filepath.ToSlash(p))
		}
	}
	report, err := compareTrees(ctx, progress, s, lopts)
	if err != nil {
		return false, err
	}
	if err := fleetdiff.Write(out, report, o.output); err != nil {
		return false, err
	}
	if report.HasFailures() {
		return true, errors.New("a Kustomization or HelmRelease failed to render: the diff is incomplete")
	}
	return report.HasChanges(), nil
}

// loadOptions are the loader's options from the flags.
func (o *baseOptions) loadOptions() (fleet.Options, error) {
	lopts := fleet.Options{Paths: o.paths, NoRemoteBases: o.noRemoteBases}
	for _, s := range o.sources {
		name, dir, ok := strings.Cut(s, "=")
		if !ok || name == "" || dir == "" {
			return lopts, fmt.Errorf("--source %q: want NAME=DIR", s)
		}
		if lopts.Sources == nil {
			lopts.Sources = map[string]string{}
		}
		lopts.Sources[name] = dir
	}
	for _, f := range o.decryptKeys {
		data, err := os.ReadFile(f)
		if err != nil {
			return lopts, fmt.Errorf("--decrypt-key: %w", err)
		}
		if lopts.DecryptKeys == nil {
			lopts.DecryptKeys = map[string][]byte{}
		}
		lopts.DecryptKeys[filepath.Base(f)] = data
	}
	return lopts, nil
}

// checkout writes the base revision (and the head one, when given) of the
// repository holding dir into a scratch directory; the working tree
// stands for the head otherwise. dir may be a directory inside the
// repository: each side is the whole tree, with dir as the place its
// entry points are looked for, so that spec.paths (relative to the
// repository's root) resolve as in the cluster.
func checkout(dir, base, head string) (*sides, error) {
	if base == "" {
		return nil, errors.New("--base is required")
	}
	repo, err := git.OpenLocal(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root := repo.Root()
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s is not inside the repository's work tree %s", dir, root)
	}
	tmp, err := os.MkdirTemp("", "weir-diff-")
	if err != nil {
		return nil, err
	}
	s := &sides{headDir: root, headRev: workingTree, sourceURLs: repo.RemoteURLs(), cleanup: func() { _ = os.RemoveAll(tmp) }}
	if rel != "." {
		s.within = filepath.ToSlash(rel)
	}
	s.baseDir = filepath.Join(tmp, "base")
	if s.baseRev, err = writeRevision(repo, base, s.baseDir); err != nil {
		s.cleanup()
		return nil, err
	}
	if head != "" {
		s.headDir = filepath.Join(tmp, "head")
		if s.headRev, err = writeRevision(repo, head, s.headDir); err != nil {
			s.cleanup()
			return nil, err
		}
	}
	return s, nil
}

// writeRevision writes rev's tree into dst and returns its label,
// "<rev>@sha1:<commit>".
func writeRevision(repo *git.LocalRepository, rev, dst string) (string, error) {
	commit, err := repo.Resolve(rev)
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return "", err
	}
	if err := repo.WriteTree(commit, dst); err != nil {
		return "", err
	}
	return rev + "@sha1:" + commit, nil
}

// compareTrees loads both trees, the head reusing the builds whose
// inputs did not change, and compares them.
func compareTrees(ctx context.Context, progress io.Writer, s *sides, lopts fleet.Options) (*fleetdiff.Report, error) {
	cache := kustomize.NewBuildCache()
	ctx = kustomize.WithBuildCache(ctx, cache)
	charts := newChartRenderer()
	lopts.Dir = s.baseDir
	base, err := loadSide(ctx, lopts, s.baseRev, charts)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", s.baseRev, err)
	}
	_, baseBuilds := cache.Stats()
	baseCharts := charts.renders
	lopts.Dir = s.headDir
	head, err := loadSide(ctx, lopts, s.headRev, charts)
	if err != nil {
		return nil, fmt.Errorf("loading the %s: %w", s.headRev, err)
	}
	hits, builds := cache.Stats()
	fmt.Fprintf(progress, "► %s: %d Kustomization builds, %d chart renders; %s: %d builds, %d reused (inputs unchanged), %d chart renders\n",
		s.baseRev, baseBuilds, baseCharts, s.headRev, builds-baseBuilds, hits, charts.renders-baseCharts)
	return fleetdiff.Compare(base, head)
}

// loadSide loads one tree and turns its graph into a fleetdiff.Side.
func loadSide(ctx context.Context, lopts fleet.Options, rev string, charts *chartRenderer) (fleetdiff.Side, error) {
	g, err := fleet.Load(ctx, lopts)
	if err != nil {
		return fleetdiff.Side{}, err
	}
	side := fleetdiff.Side{Revision: rev}
	for _, c := range g.Clusters {
		for _, n := range c.Nodes {
			if n == c.Root && c.MissingRoot {
				continue // not synced: nothing in the cluster follows it
			}
			side.Nodes = append(side.Nodes, toNode(ctx, c, n, charts))
		}
	}
	return side, nil
}

// key names a node of cluster c.
func key(c *fleet.Cluster, n *fleet.Node) fleetdiff.Key {
	return fleetdiff.Key{Cluster: c.Entry, Kind: n.Object.GetKind(), Namespace: n.Object.GetNamespace(), Name: n.Object.GetName()}
}

// toNode is a loaded node as fleetdiff compares it.
func toNode(ctx context.Context, c *fleet.Cluster, n *fleet.Node, charts *chartRenderer) *fleetdiff.Node {
	out := &fleetdiff.Node{Key: key(c, n), File: n.File, Line: n.Line, Object: n.Object, Err: n.Err}
	if n.Parent != nil {
		p := key(c, n.Parent)
		out.Parent = &p
	}
	switch {
	case n.Kustomization != nil:
		out.Prune, out.Force = n.Kustomization.Spec.Prune, n.Kustomization.Spec.Force
		out.Objects, out.Err, out.Digest = n.Objects, n.Err, n.InputDigest
		if !n.Built && n.Err == nil {
			out.Skipped = fmt.Sprintf("its source %s is not this repository (give --source NAME=DIR)", n.Source)
		}
	case n.HelmRelease != nil:
		out.Objects, out.Digest, out.Skipped, out.Err = charts.render(ctx, c, n)
	}
	return out
}
