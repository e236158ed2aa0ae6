package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartcommonutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
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
	// Namespaced says whether an object's kind is namespaced (a REST
	// mapper's answer, such as a controller-runtime client's
	// IsObjectNamespaced); the chart's CRDs answer for kinds it does not
	// know. Objects of a namespaced kind without a namespace go to the
	// release's, as Helm applies them. Nil: every kind the CRDs do not
	// name is taken as cluster-scoped.
	Namespaced func(runtime.Object) (bool, error)
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
	// Objects are the release manifest after the post-render chain, as
	// ManifestObjects reads a stored one: with the ownership marks Helm
	// adds when applying.
	Objects []*unstructured.Unstructured
	// Hooks are the chart's hooks the action runs (test hooks excluded);
	// empty when spec disables hooks.
	Hooks []*unstructured.Unstructured
}

// Render renders hr's release from chrt and values exactly as Install or
// Upgrade would, without touching a cluster: the same mapping of the spec
// onto the SDK, the same post-render chain, Helm's client-only dry run.
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
	return rendered(rel, chrt, policy, install.DisableHooks, opts)
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
func rendered(rel *releasev1.Release, chrt *chartv2.Chart, policy helmv2.CRDsPolicy, noHooks bool, opts RenderOptions) (*Rendered, error) {
	out := &Rendered{ReleaseName: rel.Name, Namespace: rel.Namespace, CRDPolicy: policy}
	var crds []*unstructured.Unstructured
	for _, crd := range chrt.CRDObjects() {
		objs, err := decodeDocuments(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("failed to parse CRDs from %s: %w", crd.Filename, err)
		}
		crds = append(crds, objs...)
	}
	if policy == helmv2.Create || policy == helmv2.CreateReplace {
		out.CRDs = crds
	}
	namespaced := Namespaced(opts.Namespaced, crds)
	objects, err := ManifestObjects(rel, namespaced)
	if err != nil {
		return nil, err
	}
	out.Objects = objects
	if noHooks {
		return out, nil
	}
	for _, h := range rel.Hooks {
		if !runsOn(h, opts.Upgrade) {
			continue
		}
		objs, err := decodeDocuments(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("decoding hook %s: %w", h.Path, err)
		}
		for _, o := range objs {
			if ns, err := namespaced(o); err == nil && ns && o.GetNamespace() == "" {
				o.SetNamespace(rel.Namespace)
			}
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

// decodeDocuments splits a chart file or a hook's manifest into objects,
// in Helm's order, skipping empty documents.
func decodeDocuments(manifest string) ([]*unstructured.Unstructured, error) {
	docs := releaseutil.SplitManifests(manifest)
	keys := slices.Collect(maps.Keys(docs))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []*unstructured.Unstructured
	for _, k := range keys {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(docs[k]), &obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out, nil
}

// Namespaced answers for an object's kind: base first (nil answers
// nothing), then the CRDs given; a kind neither knows is cluster-scoped.
func Namespaced(base func(runtime.Object) (bool, error), crds []*unstructured.Unstructured) func(runtime.Object) (bool, error) {
	return func(obj runtime.Object) (bool, error) {
		if base != nil {
			if ns, err := base(obj); err == nil {
				return ns, nil
			} else if !apimeta.IsNoMatchError(err) {
				return false, err
			}
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		for _, crd := range crds {
			group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
			if group == gvk.Group && kind == gvk.Kind {
				scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
				return scope == "Namespaced", nil
			}
		}
		return false, nil
	}
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
