package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"sigs.k8s.io/yaml"
)

// EffectiveValuesFiles is spec.valuesFiles as Flux reads it: the chart's
// own values.yaml alone changes nothing, so it counts as none.
func EffectiveValuesFiles(files []string) []string {
	if len(files) == 1 && path.Clean(files[0]) == chartutil.ValuesfileName {
		return nil
	}
	return files
}

// MergeValuesFiles reads the values files at paths, relative to the
// source root, and merges them in order, later keys winning and maps
// merged key by key (Helm's loader.MergeMaps, the rule Flux uses). A
// missing file fails, or is skipped with ignoreMissing. It returns the
// merged values and the files that went into them.
func MergeValuesFiles(root string, paths []string, ignoreMissing bool, l Limits) (map[string]any, []string, error) {
	merged := map[string]any{}
	used := make([]string, 0, len(paths))
	for _, p := range paths {
		data, err := readValuesFile(root, p, l)
		if errors.Is(err, fs.ErrNotExist) && ignoreMissing {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if merged, err = mergeValues(merged, data, p); err != nil {
			return nil, nil, err
		}
		used = append(used, p)
	}
	return merged, used, nil
}

func readValuesFile(root, p string, l Limits) ([]byte, error) {
	missing := fmt.Errorf("no values file found at path '/%s' (reference '%s'): %w", path.Clean(p), p, fs.ErrNotExist)
	full, err := SecurePath(root, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, missing
	}
	if limit := l.fileSize(); limit >= 0 && fi.Size() > limit {
		return nil, fileTooLarge(p, fi.Size(), limit)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, fmt.Errorf("could not read values from file '%s': %w", p, withoutRoot(err, root))
	}
	return data, nil
}

// MergeChartValues merges values files that sit inside a chart (a chart
// pulled from a repository carries its alternatives with it);
// "values.yaml" stands for the chart's own defaults.
func MergeChartValues(ch *chartv2.Chart, paths []string, ignoreMissing bool) (map[string]any, []string, error) {
	merged := map[string]any{}
	used := make([]string, 0, len(paths))
	for _, p := range paths {
		name := path.Clean(p)
		if name == chartutil.ValuesfileName {
			merged = loader.MergeMaps(merged, ch.Values)
			used = append(used, p)
			continue
		}
		data := chartFile(ch, name)
		if data == nil {
			if ignoreMissing {
				continue
			}
			return nil, nil, fmt.Errorf("no values file found at path '%s'", p)
		}
		var err error
		if merged, err = mergeValues(merged, data, p); err != nil {
			return nil, nil, err
		}
		used = append(used, p)
	}
	return merged, used, nil
}

func chartFile(ch *chartv2.Chart, name string) []byte {
	for _, f := range append(ch.Raw, ch.Files...) {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func mergeValues(into map[string]any, data []byte, name string) (map[string]any, error) {
	values := map[string]any{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("unmarshaling values from '%s' failed: %w", name, err)
	}
	return loader.MergeMaps(into, values), nil
}

// OverwriteValues makes vals the chart's default values: its values.yaml
// (what chartutil.Save writes) and its parsed Values. It reports whether
// anything changed.
func OverwriteValues(ch *chartv2.Chart, vals map[string]any) (bool, error) {
	if vals == nil {
		return false, nil
	}
	var data []byte
	if len(vals) > 0 {
		var err error
		if data, err = yaml.Marshal(vals); err != nil {
			return false, fmt.Errorf("encoding merged values: %w", err)
		}
	}
	ch.Values = vals
	for _, f := range ch.Raw {
		if f.Name == chartutil.ValuesfileName {
			if bytes.Equal(f.Data, data) {
				return false, nil
			}
			f.Data = data
			return true, nil
		}
	}
	ch.Raw = append(ch.Raw, &common.File{Name: chartutil.ValuesfileName, Data: data, ModTime: ch.ModTime})
	return true, nil
}
