package output

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteValue prints v as indented JSON or as YAML, for verbs whose -o
// prints a plain record rather than Kubernetes objects.
func WriteValue(w io.Writer, format string, v any) error {
	var b []byte
	var err error
	switch format {
	case FormatJSON:
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	case FormatYAML:
		b, err = yaml.Marshal(v)
	default:
		return fmt.Errorf("output format %q not supported, can be 'json' or 'yaml'", format)
	}
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	_, err = w.Write(b)
	return err
}
