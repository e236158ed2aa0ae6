package fleet

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// document is one YAML document of a file, as far as finding it goes.
type document struct {
	line       int
	apiVersion string
	kind       string
	namespace  string
	name       string
	node       *kyaml.Node
}

// documents parses files once each and remembers their documents.
type documents struct {
	mu    sync.Mutex
	files map[string][]document
}

// of returns the documents of the file at abs; nil when it cannot be read
// or parsed.
func (d *documents) of(abs string) []document {
	d.mu.Lock()
	defer d.mu.Unlock()
	if docs, ok := d.files[abs]; ok {
		return docs
	}
	data, err := os.ReadFile(abs)
	var docs []document
	if err == nil {
		docs = parseDocuments(data)
	}
	if d.files == nil {
		d.files = map[string][]document{}
	}
	d.files[abs] = docs
	return docs
}

// parseDocuments reads the mappings of a multi-document YAML stream with
// their lines; it stops at the first document kyaml cannot read.
func parseDocuments(data []byte) []document {
	dec := kyaml.NewDecoder(bytes.NewReader(data))
	var docs []document
	for {
		var n kyaml.Node
		if err := dec.Decode(&n); err != nil {
			if !errors.Is(err, io.EOF) {
				return docs
			}
			return docs
		}
		if n.Kind != kyaml.DocumentNode || len(n.Content) == 0 || n.Content[0].Kind != kyaml.MappingNode {
			continue
		}
		m := n.Content[0]
		docs = append(docs, document{
			line:       m.Line,
			apiVersion: scalar(m, "apiVersion"),
			kind:       scalar(m, "kind"),
			namespace:  scalar(field(m, "metadata"), "namespace"),
			name:       scalar(field(m, "metadata"), "name"),
			node:       m,
		})
	}
}

// field returns the value of key in mapping m, or nil.
func field(m *kyaml.Node, key string) *kyaml.Node {
	if m == nil || m.Kind != kyaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalar returns the scalar value of key in mapping m, or "".
func scalar(m *kyaml.Node, key string) string {
	if v := field(m, key); v != nil && v.Kind == kyaml.ScalarNode {
		return v.Value
	}
	return ""
}

// lineOf finds the line of the document defining kind/name in docs: the
// same kind and name, else the same kind and a name the build has prefixed
// or suffixed, else the only document of that kind; 0 when none fits.
func lineOf(docs []document, kind, name string) int {
	var sameKind []document
	for _, d := range docs {
		if d.kind != kind {
			continue
		}
		if d.name == name {
			return d.line
		}
		sameKind = append(sameKind, d)
	}
	for _, d := range sameKind {
		if d.name != "" && strings.Contains(name, d.name) {
			return d.line
		}
	}
	if len(sameKind) == 1 {
		return sameKind[0].line
	}
	return 0
}
