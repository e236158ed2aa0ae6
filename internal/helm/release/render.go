package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartcommonutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// The label and annotations Helm writes on every object of a release
// when it applies it (its ownership marks).
const (
	ManagedByLabel               = "app.kubernetes.io/managed-by"
	ReleaseNameAnnotation        = "meta.helm.sh/release-name"
	ReleaseNamespaceAnnotation   = "meta.helm.sh/release-namespace"
	managedByHelm                = "Helm"
	postRenderFilenameAnnotation = "postrenderer.helm.sh/postrender-filename"
)

// RenderOptions say how to render beyond what the HelmRelease holds.
type RenderOptions struct {
	// Upgrade renders the upgrade of an existing release: templates see
	// .Release.IsUpgrade, and spec.upgrade's hooks and CRD policy apply.
	Upgrade bool
	// UseHelm3Defaults and AllowDNSLookups are the feature gates.
	UseHelm3Defaults bool
	AllowDNSLookups  bool
	// KubeVersion and APIVersions are the capabilities templates see;
	// Helm's client-only defaults when unset.
	KubeVersion *common.KubeVersion
	APIVersions []string
	// Previous is the release an upgrade replaces: spec.upgrade.
	// preserveValues reuses its values as Helm's upgrade does.
	Previous *releasev1.Release
}

// Rendered is what installing or upgrading a HelmRelease would apply.
type Rendered struct {
	// ReleaseName and Namespace are the release's (spec.releaseName,
	// spec.targetNamespace rules).
	ReleaseName, Namespace string
	// CRDs are the chart's crds/ files when the CRD policy applies them.
	CRDs []*unstructured.Unstructured
	// CRDPolicy is that policy: Create leaves existing CRDs alone,
	// CreateReplace replaces them.
	CRDPolicy helmv2.CRDsPolicy
	// Objects are the release manifest after the post-render chain, with
	// the ownership marks Helm adds when applying.
	Objects []*unstructured.Unstructured
	// Hooks are the chart's hooks the action runs (test hooks excluded);
	// empty when spec disables hooks.
	Hooks []*unstructured.Unstructured
}

// Render renders hr's release from chrt and values exactly as Install or
// Upgrade would, without touching a cluster: the same mapping of the spec
// onto the SDK, the same post-render chain, Helm's client-only dry run.
// Objects lacking a namespace keep it empty; SetNamespaces fills it in
// with a cluster's REST mapper.
func Render(ctx context.Context, hr *helmv2.HelmRelease, chrt *chartv2.Chart, values map[string]any, opts RenderOptions) (*Rendered, error) {
	c := &Client{
		opts: Options{
			Name: hr.GetReleaseName(), Namespace: hr.GetReleaseNamespace(),
			UseHelm3Defaults: opts.UseHelm3Defaults, AllowDNSLookups: opts.AllowDNSLookups,
		},
		cfg: action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler)),
	}
	c.cfg.HookOutputFunc = func(_, _, _ string) io.Writer { return io.Discard }
	install := c.newInstall(hr, hr.GetInstall())
	install.DryRunStrategy = action.DryRunClient
	install.IsUpgrade = opts.Upgrade
	install.KubeVersion = opts.KubeVersion
	install.APIVersions = opts.APIVersions
	install.IncludeCRDs = false // listed apart, by policy
	install.SkipCRDs = true
	policy := hr.GetInstall().GetCRDsPolicy()
	if opts.Upgrade {
		up := hr.GetUpgrade()
		install.DisableHooks = up.DisableHooks
		install.SkipSchemaValidation = up.DisableSchemaValidation
		policy = up.GetCRDsPolicy()
		var err error
		if chrt, values, err = preserveValues(up, opts.Previous, chrt, values); err != nil {
			return nil, err
		}
	}
	rls, err := install.RunWithContext(ctx, chrt, values)
	if err != nil {
		return nil, fmt.Errorf("rendering release %s/%s: %w", c.opts.Namespace, c.opts.Name, err)
	}
	rel, err := toV1(rls)
	if err != nil || rel == nil {
		return nil, errors.Join(errors.New("rendering produced no release"), err)
	}
	return rendered(rel, chrt, policy, install.DisableHooks, opts.Upgrade)
}

// preserveValues is Helm's upgrade with ReuseValues (preserveValues): the
// previous release's values under the new ones, and the previous chart
// defaults in place of the new chart's.
func preserveValues(up helmv2.Upgrade, prev *releasev1.Release, chrt *chartv2.Chart, values map[string]any) (*chartv2.Chart, map[string]any, error) {
	if !up.PreserveValues || prev == nil || prev.Chart == nil {
		return chrt, values, nil
	}
	old, err := chartcommonutil.CoalesceValues(prev.Chart, prev.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to rebuild old values: %w", err)
	}
	c := *chrt
	c.Values = old
	return &c, chartcommonutil.CoalesceTables(values, prev.Config), nil
}

// rendered decodes the dry-run release into objects.
func rendered(rel *releasev1.Release, chrt *chartv2.Chart, policy helmv2.CRDsPolicy, noHooks, upgrade bool) (*Rendered, error) {
	out := &Rendered{ReleaseName: rel.Name, Namespace: rel.Namespace, CRDPolicy: policy}
	objects, err := DecodeManifest(rel.Manifest)
	if err != nil {
		return nil, fmt.Errorf("decoding the rendered manifest: %w", err)
	}
	for _, o := range objects {
		markOwned(o, rel.Name, rel.Namespace)
	}
	out.Objects = objects
	if policy == helmv2.Create || policy == helmv2.CreateReplace {
		for _, crd := range chrt.CRDObjects() {
			objs, err := DecodeManifest(string(crd.File.Data))
			if err != nil {
				return nil, fmt.Errorf("failed to parse CRDs from %s: %w", crd.Filename, err)
			}
			out.CRDs = append(out.CRDs, objs...)
		}
	}
	if noHooks {
		return out, nil
	}
	for _, h := range rel.Hooks {
		if !runsOn(h, upgrade) {
			continue
		}
		objs, err := DecodeManifest(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("decoding hook %s: %w", h.Path, err)
		}
		out.Hooks = append(out.Hooks, objs...)
	}
	return out, nil
}

// runsOn reports whether hook h runs on install (or upgrade).
func runsOn(h *releasev1.Hook, upgrade bool) bool {
	events := []releasev1.HookEvent{releasev1.HookPreInstall, releasev1.HookPostInstall}
	if upgrade {
		events = []releasev1.HookEvent{releasev1.HookPreUpgrade, releasev1.HookPostUpgrade}
	}
	return slices.ContainsFunc(h.Events, func(e releasev1.HookEvent) bool { return slices.Contains(events, e) })
}

// markOwned adds Helm's ownership marks, as its install and upgrade do
// before applying, and drops the post-renderer's bookkeeping.
func markOwned(o *unstructured.Unstructured, name, namespace string) {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = managedByHelm
	o.SetLabels(labels)
	annotations := o.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, postRenderFilenameAnnotation)
	annotations[ReleaseNameAnnotation], annotations[ReleaseNamespaceAnnotation] = name, namespace
	o.SetAnnotations(annotations)
}

// DecodeManifest splits a multi-document manifest (a release's, a hook's)
// into objects, skipping empty documents.
func DecodeManifest(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// SetNamespaces puts objects lacking a namespace into namespace when their
// kind is namespaced, as Helm's kube client does when applying: mapper
// answers for kinds the cluster serves, the rendered CRDs for the others
// (a kind neither knows keeps no namespace).
func SetNamespaces(objects, crds []*unstructured.Unstructured, mapper apimeta.RESTMapper, namespace string) {
	for _, o := range objects {
		if o.GetNamespace() != "" {
			continue
		}
		if namespaced(o.GroupVersionKind(), crds, mapper) {
			o.SetNamespace(namespace)
		}
	}
}

func namespaced(gvk schema.GroupVersionKind, crds []*unstructured.Unstructured, mapper apimeta.RESTMapper) bool {
	if mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Scope.Name() == apimeta.RESTScopeNameNamespace
		}
	}
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		if group == gvk.Group && kind == gvk.Kind {
			scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
			return scope == "Namespaced"
		}
	}
	return false
}

// ClusterCapabilities reads what templates see of the cluster of
// restConfig as .Capabilities when the controller installs: its Kubernetes
// version and the API versions it serves, asked as Helm asks them.
func ClusterCapabilities(restConfig *rest.Config) (*common.KubeVersion, []string, error) {
	dc, err := NewGetter(restConfig, "").ToDiscoveryClient()
	if err != nil {
		return nil, nil, fmt.Errorf("could not get Kubernetes discovery client: %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("could not get server version from Kubernetes: %w", err)
	}
	kv, err := common.ParseKubeVersion(v.GitVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing Kubernetes version %q: %w", v.GitVersion, err)
	}
	versions, err := action.GetVersionSet(dc)
	if err != nil {
		return nil, nil, err
	}
	return kv, versions, nil
}
