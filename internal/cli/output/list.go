package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Formats accepted by -o on the verbs that list objects. The empty format
// is Flux's table.
const (
	FormatTable = ""
	FormatWide  = "wide"
	FormatYAML  = "yaml"
	FormatJSON  = "json"
	FormatName  = "name"
)

// CheckFormat refuses a format -o does not know.
func CheckFormat(format string) error {
	switch format {
	case FormatTable, FormatWide, FormatYAML, FormatJSON, FormatName:
		return nil
	}
	return fmt.Errorf("unknown output format %q: use one of yaml, json, wide, name", format)
}

// WriteList prints objs as kubectl does for -o yaml|json (one v1 List, its
// items without managedFields, as kubectl shows them by default) or -o name
// (kind.group/name, one a line).
func WriteList(w io.Writer, format string, objs []unstructured.Unstructured) error {
	if format == FormatName {
		for _, o := range objs {
			if _, err := fmt.Fprintln(w, QualifiedName(&o)); err != nil {
				return err
			}
		}
		return nil
	}
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		c := o.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		items = append(items, c.Object)
	}
	list := map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      items,
		"metadata":   map[string]any{"resourceVersion": ""},
	}
	var data []byte
	var err error
	switch format {
	case FormatYAML:
		data, err = yaml.Marshal(list)
	case FormatJSON:
		data, err = json.MarshalIndent(list, "", "    ")
		data = append(data, '\n')
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// QualifiedName is kubectl's -o name form: gitrepository.source.toolkit.fluxcd.io/podinfo.
func QualifiedName(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	res := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		res += "." + gvk.Group
	}
	return res + "/" + o.GetName()
}
