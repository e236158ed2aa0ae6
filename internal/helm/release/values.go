package release

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Values composes a release's values as Flux does: each spec.valuesFrom
// entry in order (a YAML document merged at the root, or with targetPath a
// single value set at that path, overriding whatever the entries before it
// put there), then spec.values merged on top. ConfigMaps and Secrets are
// read through reader, from the HelmRelease's namespace. A missing object
// is skipped when the entry is optional; a missing key never is.
func Values(ctx context.Context, reader client.Reader, hr *helmv2.HelmRelease) (map[string]any, error) {
	values, _, err := ValueLayers(ctx, reader, hr)
	return values, err
}

// Layer is one step of Values: a spec.valuesFrom entry (Ref set) or
// spec.values (Ref nil), with what that step sets on its own (a targetPath
// entry's value at its path). The UI's HelmRelease page tells from the
// layers where each value came from.
type Layer struct {
	Ref *helmv2.ValuesReference
	// Skipped is an optional entry whose object does not exist.
	Skipped bool
	Values  map[string]any
}

// ValueLayers is Values and the layers it merged, in order.
func ValueLayers(ctx context.Context, reader client.Reader, hr *helmv2.HelmRelease) (map[string]any, []Layer, error) {
	result := map[string]any{}
	layers := make([]Layer, 0, len(hr.Spec.ValuesFrom)+1)
	for i := range hr.Spec.ValuesFrom {
		ref := &hr.Spec.ValuesFrom[i]
		data, found, err := valuesData(ctx, reader, hr.Namespace, *ref)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			layers = append(layers, Layer{Ref: ref, Skipped: true})
			continue
		}
		own, err := mergeReference(map[string]any{}, *ref, hr.Namespace, data)
		if err != nil {
			return nil, nil, err
		}
		if result, err = mergeReference(result, *ref, hr.Namespace, data); err != nil {
			return nil, nil, err
		}
		layers = append(layers, Layer{Ref: ref, Values: own})
	}
	inline, err := hr.GetValues()
	if err != nil {
		return nil, nil, fmt.Errorf("unable to read inline values: %w", err)
	}
	layers = append(layers, Layer{Values: inline})
	return loader.MergeMaps(result, inline), layers, nil
}

// valuesData reads ref's key; found is false for a missing optional object.
func valuesData(ctx context.Context, reader client.Reader, namespace string, ref helmv2.ValuesReference) (string, bool, error) {
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	var data map[string]string
	switch ref.Kind {
	case "ConfigMap":
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, key, &cm); err != nil {
			return missing(ref, key, err)
		}
		data = cm.Data
		if v, ok := cm.BinaryData[ref.GetValuesKey()]; ok {
			data = map[string]string{ref.GetValuesKey(): string(v)}
		}
	case "Secret":
		var secret corev1.Secret
		if err := reader.Get(ctx, key, &secret); err != nil {
			return missing(ref, key, err)
		}
		data = map[string]string{}
		for k, v := range secret.Data {
			data[k] = string(v)
		}
	default:
		return "", false, fmt.Errorf("unsupported ValuesReference kind '%s'", ref.Kind)
	}
	v, ok := data[ref.GetValuesKey()]
	if !ok {
		return "", false, fmt.Errorf("missing key '%s' in %s '%s'", ref.GetValuesKey(), ref.Kind, key)
	}
	return v, true, nil
}

func missing(ref helmv2.ValuesReference, key types.NamespacedName, err error) (string, bool, error) {
	if apierrors.IsNotFound(err) {
		if ref.Optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("could not find %s '%s'", ref.Kind, key)
	}
	return "", false, fmt.Errorf("could not get %s '%s': %w", ref.Kind, key, err)
}

// mergeReference puts one entry's data into result.
func mergeReference(result map[string]any, ref helmv2.ValuesReference, namespace, data string) (map[string]any, error) {
	name := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	if ref.TargetPath == "" {
		values := map[string]any{}
		if err := yaml.Unmarshal([]byte(data), &values); err != nil {
			return nil, fmt.Errorf("unable to read values from key '%s' in %s '%s': %w", ref.GetValuesKey(), ref.Kind, name, err)
		}
		return loader.MergeMaps(result, values), nil
	}
	if err := setPath(result, ref.TargetPath, data, ref.Literal); err != nil {
		return nil, fmt.Errorf("unable to replace value at path '%s' with value from key '%s' in %s '%s': %w",
			ref.TargetPath, ref.GetValuesKey(), ref.Kind, name, err)
	}
	return result, nil
}

// setPath sets path to value with Helm's --set parser: --set-literal when
// literal, --set-string when the value is quoted (the quotes dropped), and
// --set (typed: numbers, booleans, null) otherwise.
func setPath(values map[string]any, path, value string, literal bool) error {
	if literal {
		return strvals.ParseLiteralInto(path+"="+value, values)
	}
	for _, q := range []string{"'", `"`} {
		if len(value) >= 2 && strings.HasPrefix(value, q) && strings.HasSuffix(value, q) {
			return strvals.ParseIntoString(path+"="+strings.Trim(value, q), values)
		}
	}
	return strvals.ParseInto(path+"="+value, values)
}
