// Package buildcmd implements `weir build kustomization NAME --path DIR`:
// the objects the controller would apply for that Kustomization if the
// source held the local directory, rendered by the controller's own code
// (internal/kustomize/render.Kustomization), with Secret values masked
// (without --path, the source is an ExternalArtifact whose tree the local
// repository's ArtifactGenerator builds: generated.go);
// and `weir build helmrelease NAME`: the objects the helm controller would
// install or upgrade, rendered by internal/helm/release.Render.
package buildcmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Options are the flags shared by `build kustomization` and `diff
// kustomization`.
type Options struct {
	// Path is the local directory that matches spec.path.
	Path string
	// KustomizationFile is a local YAML file holding the Kustomization,
	// used instead of the cluster's.
	KustomizationFile string
	// DryRun reads nothing from the cluster (needs KustomizationFile):
	// substituteFrom is skipped and SOPS content is left as it is.
	DryRun bool
	// StrictSubstitute fails on an undefined variable without default, as
	// the controller does with its StrictPostBuildSubstitutions gate. Off
	// by default, as in flux (and in the controller without the gate).
	StrictSubstitute bool
	// IgnorePaths are gitignore-format patterns, relative to Path, of files
	// and directories left out of the kustomization generated for a
	// directory that has none (flux's --ignore-paths).
	IgnorePaths []string
	// InMemoryBuild is accepted for flux's sake: weir never writes a
	// temporary copy of the directory, every build reads it in place.
	InMemoryBuild bool
	// Recursive also builds the Kustomizations the build holds, each with
	// its own spec, from the local copy of its source: the directory of
	// the one being built for that same source, LocalSources for others.
	Recursive bool
	// LocalSources map "Kind/namespace/name" of a source to the local
	// directory standing for its artifact's root, for Recursive and for
	// the sources of an ArtifactGenerator that are not this repository.
	LocalSources map[string]string
}

// AddFlags registers the options on cmd.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Path, "path", "",
		"path to a local directory that matches the Kustomization's spec.path (optional for an ExternalArtifact an ArtifactGenerator of the repository generates)")
	cmd.Flags().StringVar(&o.KustomizationFile, "kustomization-file", "", "path to a local file holding the Kustomization, instead of the cluster's")
	cmd.Flags().BoolVar(&o.StrictSubstitute, "strict-substitute", false,
		"When enabled, the post build substitutions will fail if a var without a default value is declared in files but is missing from the input vars.")
	cmd.Flags().StringSliceVar(&o.IgnorePaths, "ignore-paths", nil, "set paths to ignore in .gitignore format")
	cmd.Flags().BoolVar(&o.InMemoryBuild, "in-memory-build", false,
		"Use in-memory filesystem during build (weir always builds without writing a temporary copy; accepted for flux compatibility)")
	cmd.Flags().BoolVarP(&o.Recursive, "recursive", "r", false, "Recursively build Kustomizations")
	cmd.Flags().StringToStringVar(&o.LocalSources, "local-sources", nil,
		"Comma-separated list of repositories in format: Kind/namespace/name=path (for --recursive and an ArtifactGenerator's sources)")
}

// NewCommand returns `weir build`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build a Kustomization or HelmRelease locally, as the controller would",
	}
	opts := Options{}
	ks := &cobra.Command{
		Use:     "kustomization NAME [--path DIR]",
		Aliases: []string{"ks"},
		Short:   "Render what a Kustomization would apply from a local directory or generated artifact",
		Long: `build renders the local directory given by --path with the Kustomization's
spec (patches, images, namePrefix, postBuild substitution, SOPS decryption...)
using the code the controller runs, and prints the objects as multi-document
YAML. Secret values are masked. The Kustomization is read from the cluster, or
from --kustomization-file; with --dry-run nothing is read from the cluster
(substituteFrom is skipped).

Without --path, a Kustomization whose sourceRef is an ExternalArtifact is
built from that artifact's content: the ArtifactGenerator of the local fleet
repository (the Git work tree holding --kustomization-file, else the current
directory) that generates it is run on the local files with the controller's
copy rules, in a temporary directory, and spec.path is built inside it. A
source of the generator stands for this repository when it is the cluster's
root GitRepository or one whose URL is a remote of it; any other needs
--local-sources Kind/namespace/name=DIR.`,
		Example: `  # Render the local overlay as the cluster would get it
  weir build kustomization apps --path ./apps/dev

  # Offline, from a Kustomization file
  weir build kustomization apps --path ./apps/dev --kustomization-file ./clusters/dev/apps.yaml --dry-run

  # A Kustomization of an ExternalArtifact that an ArtifactGenerator of the repository writes
  weir build kustomization apps --kustomization-file ./clusters/staging/apps.yaml --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			built, err := RenderTree(ctx, deps, args[0], opts)
			if err != nil {
				return err
			}
			var objects []*unstructured.Unstructured
			for _, b := range built {
				objects = append(objects, b.Objects...)
			}
			return Print(streams.Out, Mask(objects))
		},
	}
	opts.AddFlags(ks)
	ks.Flags().BoolVar(&opts.DryRun, "dry-run", false, "read nothing from the cluster (needs --kustomization-file; substituteFrom is skipped)")
	cmd.AddCommand(ks, newHelmReleaseCommand(streams, deps), newArtifactCommand(streams, deps))
	return cmd
}

// Render loads the Kustomization (from the cluster or the file) and renders
// opts.Path with it, or, without opts.Path, the tree of the ExternalArtifact
// its source is, built from the ArtifactGenerator of the local repository
// that generates it. It returns the objects and the Kustomization.
func Render(ctx context.Context, deps *clideps.Deps, name string, opts Options) ([]*unstructured.Unstructured, *kustomizev1.Kustomization, error) {
	opts.Recursive = false
	built, err := RenderTree(ctx, deps, name, opts)
	if err != nil {
		return nil, nil, err
	}
	return built[0].Objects, built[0].Kustomization, nil
}

// renderRoot is Render with the resolver of generated artifacts; it returns
// the directory standing for the source's root too.
func renderRoot(ctx context.Context, reader client.Reader, namespace, name string, opts Options,
	gen *generated) ([]*unstructured.Unstructured, *kustomizev1.Kustomization, string, error) {
	obj, err := load(ctx, reader, namespace, name, opts.KustomizationFile)
	if err != nil {
		return nil, nil, "", err
	}
	ref := obj.Spec.SourceRef
	if opts.Path == "" && ref.Kind != sourceextensionsv1beta1.ExternalArtifactKind {
		return nil, nil, "", fmt.Errorf("--path is required: Kustomization %s/%s builds from %s %s, and only an ExternalArtifact generated in the local repository builds without it",
			obj.Namespace, obj.Name, ref.Kind, ref.Name)
	}
	if opts.Path == "" {
		ns := cmp.Or(ref.Namespace, obj.Namespace)
		root, err := gen.tree(ctx, ns, ref.Name)
		if err != nil {
			return nil, nil, "", fmt.Errorf("building Kustomization %s/%s: %w", obj.Namespace, obj.Name, err)
		}
		objects, err := renderAt(ctx, reader, obj, root, cleanPath(obj.Spec.Path), opts)
		if err != nil {
			label := sourceextensionsv1beta1.ExternalArtifactKind + "/" + ns + "/" + ref.Name
			return nil, nil, "", fmt.Errorf("building Kustomization %s/%s from %s: %s", obj.Namespace, obj.Name, label,
				strings.ReplaceAll(err.Error(), root, label))
		}
		return objects, obj, root, nil
	}
	root, rel, err := sourceRoot(opts.Path)
	if err != nil {
		return nil, nil, "", err
	}
	objects, err := renderAt(ctx, reader, obj, root, rel, opts)
	if err != nil {
		return nil, nil, "", fmt.Errorf("building Kustomization %s/%s from %s: %w", obj.Namespace, obj.Name, opts.Path, err)
	}
	return objects, obj, root, nil
}

// cleanPath is spec.path relative to the source's root, slash-separated.
func cleanPath(p string) string {
	return filepath.ToSlash(filepath.Clean(strings.TrimPrefix(p, "./")))
}

// renderAt renders obj's spec with spec.path rel below root.
func renderAt(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization, root, rel string,
	opts Options) ([]*unstructured.Unstructured, error) {
	exclude, err := ignored(root, rel, opts.IgnorePaths)
	if err != nil {
		return nil, err
	}
	spec := obj.DeepCopy()
	spec.Spec.Path = rel
	res, err := render.Kustomization(ctx, reader, spec, root, render.Options{
		AllowUndefinedVariables: !opts.StrictSubstitute,
		Offline:                 opts.DryRun,
		Exclude:                 exclude,
	})
	if err != nil {
		return nil, err
	}
	return res.Objects, nil
}

// load reads the Kustomization from file, or from the cluster.
func load(ctx context.Context, reader client.Reader, namespace, name, file string) (*kustomizev1.Kustomization, error) {
	obj := &kustomizev1.Kustomization{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading --kustomization-file: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			return nil, fmt.Errorf("--kustomization-file %s: %w", file, err)
		}
		if obj.Kind != kustomizev1.KustomizationKind {
			return nil, fmt.Errorf("--kustomization-file %s holds a %q, not a Kustomization", file, obj.Kind)
		}
		if obj.Name != name {
			return nil, fmt.Errorf("--kustomization-file %s holds Kustomization %q, not %q", file, obj.Name, name)
		}
		if obj.Namespace == "" {
			obj.Namespace = namespace
		}
		return obj, nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	if err := reader.Get(ctx, key, obj); err != nil {
		return nil, fmt.Errorf("Kustomization %s: %w", key, err) //nolint:staticcheck // the kind leads, as in flux
	}
	return obj, nil
}

// sourceRoot returns the directory standing for the source artifact's root
// (the enclosing Git work tree, else the path itself) and the path relative
// to it, so that bases outside the path (../base) resolve as they do in
// the artifact, and nothing outside the repository is read.
func sourceRoot(path string) (root, rel string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("--path %s: not a directory", path)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", err
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			rel, err := filepath.Rel(dir, abs)
			return dir, filepath.ToSlash(rel), err
		}
		if parent := filepath.Dir(dir); parent == dir {
			return abs, ".", nil
		}
	}
}

// ignored lists the paths below rel (relative to root, slash-separated)
// that the gitignore-format patterns match, a directory standing for
// everything below it. The patterns apply from rel, as flux applies
// --ignore-paths from --path.
func ignored(root, rel string, patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	filter := artifact.NewFilterFromRules(artifact.IgnoreRules{Text: strings.Join(patterns, "\n")})
	dir := filepath.Join(root, filepath.FromSlash(rel))
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		r, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if !filter.Exclude(filepath.ToSlash(r), d.IsDir()) {
			return nil
		}
		out = append(out, path.Join(rel, filepath.ToSlash(r)))
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("applying --ignore-paths: %w", err)
	}
	return out, nil
}

// masked replaces Secret values in printed output.
const masked = "*****"

// Mask returns copies of objects with every Secret data and stringData
// value replaced, so build output can be shared without leaking secrets.
func Mask(objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objects))
	for i, o := range objects {
		if o.GetKind() != "Secret" || o.GetAPIVersion() != "v1" {
			out[i] = o
			continue
		}
		c := o.DeepCopy()
		for _, field := range []string{"data", "stringData"} {
			values, ok := c.Object[field].(map[string]any)
			if !ok {
				continue
			}
			for k := range values {
				values[k] = masked
			}
		}
		out[i] = c
	}
	return out
}

// Print writes objects as a multi-document YAML stream.
func Print(w io.Writer, objects []*unstructured.Unstructured) error {
	data, err := kustomize.ToYAML(objects)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
