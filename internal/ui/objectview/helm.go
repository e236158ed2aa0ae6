package objectview

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Masked stands in for every value a Secret gave.
const Masked = "*****"

// Helm is what a HelmRelease's page shows of its chart and values.
type Helm struct {
	Chart Chart `json:"chart"`
	// ValuesYAML is the merged values as the helm controller composes
	// them (release.ValueLayers), each value a Secret gave masked.
	ValuesYAML string `json:"valuesYAML"`
	// Origins say, per top-level key, which layers set values below it,
	// in merge order (the last one wins where they overlap).
	Origins []ValueOrigin `json:"origins"`
	// ValuesError says why the values could not be composed as the
	// caller (a ConfigMap or Secret it may not read, a missing key).
	ValuesError string `json:"valuesError,omitempty"`
}

// Chart is the chart a HelmRelease deploys: the newest snapshot's name and
// version (spec.chart's before any release), and the digest of the chart
// artifact (an OCIRepository's from status.lastAttemptedRevisionDigest, a
// HelmChart's from its status.artifact).
type Chart struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion,omitempty"`
	Digest     string `json:"digest,omitempty"`
	// HelmChart is the HelmChart spec.chart made; nil for chartRef.
	HelmChart *Ref `json:"helmChart,omitempty"`
}

// ValueOrigin is one top-level key of the values and where it came from.
type ValueOrigin struct {
	Key string `json:"key"`
	// From names each layer: "values" (spec.values), or
	// "<Kind>/<name> key <valuesKey>[ at <targetPath>]".
	From []string `json:"from"`
	// Masked is true when a Secret gave some value below the key.
	Masked bool `json:"masked,omitempty"`
}

// helmOf reads a HelmRelease's chart and values as the caller.
func helmOf(ctx context.Context, c client.Client, u *unstructured.Unstructured) *Helm {
	hr := &helmv2.HelmRelease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hr); err != nil {
		return &Helm{ValuesError: fmt.Sprintf("reading the HelmRelease: %v", err)}
	}
	out := &Helm{Chart: chartOf(ctx, c, hr), Origins: []ValueOrigin{}}
	merged, layers, err := release.ValueLayers(ctx, c, hr)
	if err != nil {
		out.ValuesError = valuesError(err)
		return out
	}
	masked, origins := originsOf(merged, layers)
	out.Origins = origins
	if len(masked) > 0 {
		b, err := yaml.Marshal(masked)
		if err != nil {
			out.ValuesError = fmt.Sprintf("writing the values as YAML: %v", err)
			return out
		}
		out.ValuesYAML = string(b)
	}
	return out
}

// valuesError is the sentence the page shows when the values cannot be
// composed.
func valuesError(err error) string {
	if apierrors.IsForbidden(err) {
		return "You may not read every ConfigMap and Secret valuesFrom names, so the values cannot be shown: " + err.Error()
	}
	return "The values cannot be composed: " + err.Error()
}

// chartOf is the chart hr deploys.
func chartOf(ctx context.Context, c client.Client, hr *helmv2.HelmRelease) Chart {
	var ch Chart
	if len(hr.Status.History) > 0 {
		s := hr.Status.History[0]
		ch.Name, ch.Version, ch.AppVersion, ch.Digest = s.ChartName, s.ChartVersion, s.AppVersion, s.OCIDigest
	} else if hr.Spec.Chart != nil {
		ch.Name, ch.Version = hr.Spec.Chart.Spec.Chart, hr.Spec.Chart.Spec.Version
	}
	if hr.Spec.ChartRef != nil {
		if hr.Status.LastAttemptedRevisionDigest != "" {
			ch.Digest = hr.Status.LastAttemptedRevisionDigest
		}
		return ch
	}
	if hr.Spec.Chart == nil {
		return ch
	}
	ns := hr.Spec.Chart.Spec.SourceRef.Namespace
	if ns == "" {
		ns = hr.Namespace
	}
	ref := Ref{Kind: kinds.HelmChart.Kind, Namespace: ns, Name: hr.GetHelmChartName()}
	if parts := strings.SplitN(hr.Status.HelmChart, "/", 2); len(parts) == 2 {
		ref.Namespace, ref.Name = parts[0], parts[1]
	}
	ch.HelmChart = &ref
	if _, u, err := read(ctx, c, ref); err == nil {
		if d, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "digest"); d != "" {
			ch.Digest = d
		}
	}
	return ch
}

// leafSep joins the keys of a leaf's path (keys may hold dots).
const leafSep = "\x1f"

// originsOf masks the merged values a Secret gave and groups the leaves'
// layers by top-level key. A leaf's layer is the last one that set a leaf
// at the same path: a later layer that set an ancestor or a map there
// would have removed or replaced it in the merged tree.
func originsOf(merged map[string]any, layers []release.Layer) (map[string]any, []ValueOrigin) {
	layerLeaves := make([]map[string]bool, len(layers))
	for i, l := range layers {
		layerLeaves[i] = map[string]bool{}
		leaves(l.Values, "", func(p string, _ any) { layerLeaves[i][p] = true })
	}
	from := map[string]map[int]bool{}
	secret := map[string]bool{}
	masked := mapCopy(merged, func(p string, v any) any {
		top := strings.SplitN(p, leafSep, 2)[0]
		if from[top] == nil {
			from[top] = map[int]bool{}
		}
		for i := len(layers) - 1; i >= 0; i-- {
			if !layerLeaves[i][p] {
				continue
			}
			from[top][i] = true
			if ref := layers[i].Ref; ref != nil && ref.Kind == "Secret" {
				secret[top] = true
				return Masked
			}
			break
		}
		return v
	})
	out := make([]ValueOrigin, 0, len(from))
	for key, idx := range from {
		o := ValueOrigin{Key: key, From: []string{}, Masked: secret[key]}
		for i := range layers {
			if idx[i] {
				o.From = append(o.From, layerName(layers[i]))
			}
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return masked, out
}

func layerName(l release.Layer) string {
	if l.Ref == nil {
		return "values"
	}
	s := fmt.Sprintf("%s/%s key %s", l.Ref.Kind, l.Ref.Name, l.Ref.GetValuesKey())
	if l.Ref.TargetPath != "" {
		s += " at " + l.Ref.TargetPath
	}
	return s
}

// leaves calls fn with the path of every leaf of m: a value that is not
// a map, or an empty map.
func leaves(m map[string]any, prefix string, fn func(path string, v any)) {
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + leafSep + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			leaves(sub, p, fn)
			continue
		}
		fn(p, v)
	}
}

// mapCopy copies m deeply, each leaf replaced by fn's answer.
func mapCopy(m map[string]any, fn func(path string, v any) any) map[string]any {
	var walk func(m map[string]any, prefix string) map[string]any
	walk = func(m map[string]any, prefix string) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			p := k
			if prefix != "" {
				p = prefix + leafSep + k
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				out[k] = walk(sub, p)
				continue
			}
			out[k] = fn(p, v)
		}
		return out
	}
	return walk(m, "")
}
