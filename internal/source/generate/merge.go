package generate

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// merge deep-merges the YAML map of the source file p into the artifact's
// file at target, which it replaces.
func (b *builder) merge(src *os.Root, p, target string, size int64) error {
	if err := b.charge(target, size); err != nil {
		return err
	}
	srcMap, err := readMap(src, p)
	if err != nil {
		return err
	}
	dstMap, err := readMap(b.out, target)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(MergeValues(dstMap, srcMap))
	if err != nil {
		return fmt.Errorf("failed to merge YAML into '%s': %w", target, err)
	}
	if err := b.out.WriteFile(target, data, 0o644); err != nil {
		return fmt.Errorf("writing '%s': %w", target, err)
	}
	return nil
}

func readMap(root *os.Root, p string) (map[string]any, error) {
	data, err := root.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading '%s': %w", p, err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("failed to parse '%s' as a YAML map: %w", p, err)
	}
	return m, nil
}

// MergeValues merges src into dst as Helm merges --values files: maps key
// by key, recursively; any other value of src, lists and nulls included,
// replaces dst's. dst is modified and returned.
func MergeValues(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = MergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}
