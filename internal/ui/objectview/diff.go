package objectview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/view/kinds"
	"github.com/weir-gitops/weir/internal/view/livediff"
)

// dialDirect connects to an artifact's own host (livediff.DialDirect);
// tests replace it to make a host unreachable without asking DNS.
var dialDirect = livediff.DialDirect

// ErrNotApplicable is Diff's error for a kind that applies nothing.
var ErrNotApplicable = errors.New("what would change is shown for Kustomizations and HelmReleases only")

// DiffState is the one thing a diff says, so a page never shows two that
// contradict each other ("nothing would change" under a build error).
type DiffState string

// The states of a DiffResult.
const (
	// DiffUnchanged: built, and applying it changes nothing.
	DiffUnchanged DiffState = "unchanged"
	// DiffChanges: built, and applying it creates, changes or prunes
	// something (the lists say what).
	DiffChanges DiffState = "changes"
	// DiffFailed: it could not be built or compared (Error says why); the
	// lists hold what a comparison found before it failed, if it began.
	DiffFailed DiffState = "failed"
	// DiffNotApplicable: the kind applies nothing (a source, a Provider).
	DiffNotApplicable DiffState = "notApplicable"
)

// DiffResult is what applying the object's current source would change.
// Error says why the diff is missing (the artifact could not be fetched,
// the build failed, the caller may not read the decryption Secret…).
type DiffResult struct {
	State DiffState `json:"state"`
	// Revision is what was rendered: the source artifact's revision, or
	// a HelmRelease's chart name@version.
	Revision string            `json:"revision"`
	Created  []livediff.Change `json:"created"`
	Changed  []livediff.Change `json:"changed"`
	Deleted  []livediff.Change `json:"deleted"`
	Error    string            `json:"error"`
}

// Diff renders what the object ref names would apply now and compares it
// with the cluster, all as the caller: a Kustomization's source's current
// artifact (fetched from status.artifact.url, else through the API
// server's service proxy; digest verified, extraction size-bounded)
// built as the controller builds it (variables, SOPS decryption with the
// Kustomization's own Secret), a HelmRelease as `weir diff hr` renders it:
// the chart its HelmChart or chartRef holds now (fetched the same way),
// with the release's values.
// Other kinds fail with ErrNotApplicable.
func Diff(ctx context.Context, c client.Client, cfg *rest.Config, ref Ref) (*DiffResult, error) {
	k, u, err := read(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	switch k.Kind {
	case kinds.Kustomization.Kind:
		return diffKustomization(ctx, c, cfg, u)
	case kinds.HelmRelease.Kind:
		return diffHelmRelease(ctx, c, cfg, u)
	}
	return nil, fmt.Errorf("%s: %w", ref, ErrNotApplicable)
}

// result fills a DiffResult from livediff's, and err.
func result(revision string, res *livediff.Result, err error) *DiffResult {
	out := &DiffResult{Revision: revision, Created: []livediff.Change{}, Changed: []livediff.Change{}, Deleted: []livediff.Change{}}
	if res != nil {
		out.Created, out.Changed, out.Deleted = res.Of(livediff.Created), res.Of(livediff.Changed), res.Of(livediff.Deleted)
	}
	switch {
	case err != nil:
		out.State, out.Error = DiffFailed, err.Error()
	case len(out.Created)+len(out.Changed)+len(out.Deleted) == 0:
		out.State = DiffUnchanged
	default:
		out.State = DiffChanges
	}
	return out
}

// NotApplicable is the answer for a kind Diff does not diff (Diff's
// ErrNotApplicable): said plainly, as a state, not as a failure.
func NotApplicable(kind string) *DiffResult {
	return &DiffResult{State: DiffNotApplicable, Created: []livediff.Change{}, Changed: []livediff.Change{}, Deleted: []livediff.Change{},
		Error: fmt.Sprintf("A %s applies nothing to the cluster: what would change is shown for Kustomizations and HelmReleases.", kind)}
}

func diffKustomization(ctx context.Context, c client.Client, cfg *rest.Config, u *unstructured.Unstructured) (*DiffResult, error) {
	obj := &kustomizev1.Kustomization{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("Kustomization %s/%s: %w", u.GetNamespace(), u.GetName(), err) //nolint:staticcheck // the kind leads
	}
	if obj.Spec.KubeConfig != nil {
		return result("", nil, errors.New("the Kustomization applies to another cluster (spec.kubeConfig): its objects are not diffed here")), nil
	}
	a, err := sourceArtifact(ctx, c, u)
	if err != nil {
		return result("", nil, err), nil
	}
	dir, err := os.MkdirTemp("", "weir-ui-diff-")
	if err != nil {
		return nil, fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := (livediff.ArtifactFetcher{Config: cfg, Dial: dialDirect}).Fetch(ctx, a, dir); err != nil {
		return result(a.Revision, nil, err), nil
	}
	built, err := render.Kustomization(ctx, c, obj, dir, render.Options{})
	if err != nil {
		err = errors.New(strings.ReplaceAll(err.Error(), dir+string(os.PathSeparator), ""))
		return result(a.Revision, nil, fmt.Errorf("building revision %s: %w", a.Revision, err)), nil
	}
	res, err := livediff.Kustomization(ctx, c, client.ObjectKeyFromObject(obj), built.Objects)
	return result(a.Revision, res, err), nil
}

// sourceArtifact reads the current artifact of the Kustomization's
// source, as the caller.
func sourceArtifact(ctx context.Context, c client.Client, u *unstructured.Unstructured) (*meta.Artifact, error) {
	sk, ns, name, err := kinds.SourceRef(u)
	if err != nil {
		return nil, err
	}
	src := sk.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, src); err != nil {
		return nil, fmt.Errorf("reading the source %s %s/%s: %w", sk.Kind, ns, name, err)
	}
	raw, ok, _ := unstructured.NestedMap(src.Object, "status", "artifact")
	if !ok {
		return nil, fmt.Errorf("the source %s %s/%s has no artifact yet", sk.Kind, ns, name)
	}
	a := &meta.Artifact{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, a); err != nil {
		return nil, fmt.Errorf("the source %s %s/%s: status.artifact: %w", sk.Kind, ns, name, err)
	}
	return a, nil
}

func diffHelmRelease(ctx context.Context, c client.Client, cfg *rest.Config, u *unstructured.Unstructured) (*DiffResult, error) {
	obj := &helmv2.HelmRelease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s: %w", u.GetNamespace(), u.GetName(), err) //nolint:staticcheck // the kind leads
	}
	if obj.Spec.KubeConfig != nil {
		return result("", nil, errors.New("the HelmRelease installs into another cluster (spec.kubeConfig): its objects are not diffed here")), nil
	}
	fetch := livediff.ArtifactFetcher{Config: cfg, Dial: dialDirect}
	hr, err := livediff.RenderHelmRelease(ctx, c, cfg, obj, livediff.RenderOptions{Fetch: fetch.Fetch})
	if err != nil {
		return result("", nil, err), nil
	}
	revision := ""
	if md := hr.Chart.Metadata; md != nil {
		revision = md.Name + "@" + md.Version
	}
	res, err := hr.Diff(ctx)
	if err == nil && hr.FromStorage {
		// The lists hold a diff, but of the installed chart: say why.
		err = errors.New("rendered with " + hr.ChartFrom + ": a new chart version would not show")
	}
	return result(revision, res, err), nil
}
