package fleetview

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// unshown are the status fields the overview and the graph never read,
// left undecoded: a Kustomization's inventory (twenty entries or
// thousands each, most of a fleet's list) and a HelmRelease's.
var unshown = map[string]bool{"inventory": true}

// managedFields is decoded only for a suspended object, whose Summary
// names the manager that suspended it: for the others it is the largest
// part of the metadata, read by nothing the pages show.
const managedFields = "managedFields"

// rawObject is one list item split at the top: its metadata and status
// field by field, so that what is not shown is skipped as bytes, never
// built as maps.
type rawObject struct {
	APIVersion string                     `json:"apiVersion"`
	Kind       string                     `json:"kind"`
	Metadata   map[string]json.RawMessage `json:"metadata"`
	Spec       json.RawMessage            `json:"spec"`
	Status     map[string]json.RawMessage `json:"status"`
}

// decodeFields decodes the parts of fields that skip does not name.
func decodeFields(fields map[string]json.RawMessage, skip func(string) bool) (map[string]any, error) {
	out := make(map[string]any, len(fields))
	for key, part := range fields {
		if skip(key) {
			continue
		}
		var v any
		if err := utiljson.Unmarshal(part, &v); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", key, err)
		}
		out[key] = v
	}
	return out, nil
}

// decodeList decodes the items of a list as the API server sent it into
// unstructured objects without their unshown status fields; numbers
// become int64 where whole, as Unstructured's own decoding makes them.
func decodeList(raw []byte) ([]unstructured.Unstructured, error) {
	var list struct {
		Items []rawObject `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decoding the list: %w", err)
	}
	out := make([]unstructured.Unstructured, len(list.Items))
	for i, item := range list.Items {
		u, err := item.decode()
		if err != nil {
			return nil, fmt.Errorf("decoding item %d of the list: %w", i, err)
		}
		out[i] = u
	}
	return out, nil
}

// decode builds the object: metadata (managedFields only when suspended),
// spec, and status without the unshown fields.
func (item rawObject) decode() (unstructured.Unstructured, error) {
	obj := map[string]any{}
	if item.APIVersion != "" {
		obj["apiVersion"] = item.APIVersion
	}
	if item.Kind != "" {
		obj["kind"] = item.Kind
	}
	if item.Spec != nil {
		var spec any
		if err := utiljson.Unmarshal(item.Spec, &spec); err != nil {
			return unstructured.Unstructured{}, fmt.Errorf("decoding spec: %w", err)
		}
		obj["spec"] = spec
	}
	md, err := decodeFields(item.Metadata, func(key string) bool { return key == managedFields })
	if err != nil {
		return unstructured.Unstructured{}, fmt.Errorf("decoding metadata: %w", err)
	}
	obj["metadata"] = md
	u := unstructured.Unstructured{Object: obj}
	if raw, ok := item.Metadata[managedFields]; ok && specSuspended(obj) {
		var v any
		if err := utiljson.Unmarshal(raw, &v); err != nil {
			return u, fmt.Errorf("decoding metadata.managedFields: %w", err)
		}
		md[managedFields] = v
	}
	if item.Status != nil {
		status, err := decodeFields(item.Status, func(key string) bool { return unshown[key] })
		if err != nil {
			return u, fmt.Errorf("decoding status: %w", err)
		}
		obj["status"] = status
	}
	return u, nil
}

// specSuspended reports spec.suspend: true, the only case whose Summary
// reads managedFields (an ArtifactGenerator's suspension by annotation
// names no manager).
func specSuspended(obj map[string]any) bool {
	suspend, _, _ := unstructured.NestedBool(obj, "spec", "suspend")
	return suspend
}
