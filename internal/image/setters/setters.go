package setters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
)

// FS is the tree the setters read and rewrite. Paths are slash-separated
// and relative to its root.
type FS interface {
	// Files lists the regular files below dir, recursively.
	Files(dir string) ([]string, error)
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte) error
}

// Values maps a setter name, <namespace>:<policy> or
// <namespace>:<policy>:<part>, to the value it writes.
type Values map[string]string

// screeningToken is what a file must contain to be parsed at all: the
// marker key, quoted as it is in the JSON comment.
var screeningToken = []byte(`"` + imagev1.SetterShortHand + `"`)

// ValuesFor returns the setters of the policies that have elected an
// image; the others have nothing to write.
func ValuesFor(policies []imagev1.ImagePolicy) Values {
	v := Values{}
	for i := range policies {
		p := &policies[i]
		ref := p.Status.LatestRef
		if ref == nil {
			continue
		}
		base := p.Namespace + ":" + p.Name
		v[base] = ref.String()
		v[base+":"+imagev1.SetterNameSuffix] = ref.Name
		v[base+":"+imagev1.SetterTagSuffix] = ref.Tag
		if ref.Digest != "" {
			v[base+":"+imagev1.SetterDigestSuffix] = ref.Digest
		}
	}
	return v
}

// Update rewrites the marked fields of the files below dir and returns
// what changed, keyed by paths relative to dir (as Flux reports them).
// Only files with a change are written.
func Update(fsys FS, dir string, values Values) (Result, error) {
	result := Result{FileChanges: map[string]ObjectChanges{}}
	files, err := fsys.Files(dir)
	if err != nil {
		return Result{}, err
	}
	for _, p := range files {
		if !candidate(p) {
			continue
		}
		data, err := fsys.ReadFile(p)
		if err != nil {
			return Result{}, err
		}
		out, changes, err := UpdateFile(data, values)
		if err != nil || len(changes) == 0 {
			continue // not YAML after all, or nothing to change
		}
		if err := fsys.WriteFile(p, out); err != nil {
			return Result{}, err
		}
		result.FileChanges[relativeTo(dir, p)] = changes
	}
	return result, nil
}

// candidate reports whether a file may hold markers, by name.
func candidate(p string) bool {
	ext := path.Ext(p)
	return ext == ".yaml" || ext == ".yml" || path.Base(p) == "Kustomization"
}

func relativeTo(dir, p string) string {
	if dir == "." || dir == "" {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// UpdateFile rewrites the marked fields of one YAML file (one or more
// documents). It returns the new content and the changes per object, or
// no changes (and nil content) when nothing differs. Content without the
// marker token is not parsed.
func UpdateFile(data []byte, values Values) ([]byte, ObjectChanges, error) {
	if !bytes.Contains(data, screeningToken) {
		return nil, nil, nil
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true}).Read()
	if err != nil {
		return nil, nil, fmt.Errorf("parse YAML: %w", err)
	}
	changes := ObjectChanges{}
	for _, n := range nodes {
		var found []Change
		visit(n.YNode(), values, &found)
		if len(found) > 0 {
			id := identify(n)
			changes[id] = append(changes[id], found...)
		}
	}
	if len(changes) == 0 {
		return nil, nil, nil
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(nodes); err != nil {
		return nil, nil, fmt.Errorf("write YAML: %w", err)
	}
	return buf.Bytes(), changes, nil
}

// visit walks a node tree and sets every marked scalar.
func visit(n *yaml.Node, values Values, found *[]Change) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			visit(c, values, found)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			visit(n.Content[i], values, found)
		}
	case yaml.ScalarNode:
		setScalar(n, values, found)
	}
}

// setScalar writes the value of the scalar's setter, if it has one that
// values knows, keeping the scalar a string.
func setScalar(n *yaml.Node, values Values, found *[]Change) {
	name, ok := marker(n)
	if !ok {
		return
	}
	value, ok := values[name]
	if !ok || value == n.Value {
		return
	}
	*found = append(*found, Change{OldValue: n.Value, NewValue: value, Setter: name})
	n.Value = value
	yaml.FormatNonStringStyle(n, *spec.StringProperty())
}

// marker returns the setter named by the scalar's comment: the line
// comment when there is one, else the head comment (kyaml's order; a
// line comment that is not a marker hides the head comment).
func marker(n *yaml.Node) (string, bool) {
	for _, c := range []string{n.LineComment, n.HeadComment} {
		if c == "" {
			continue
		}
		var fields map[string]string
		if err := json.Unmarshal([]byte(strings.TrimLeft(c, "#")), &fields); err != nil {
			return "", false
		}
		name := fields[imagev1.SetterShortHand]
		return name, name != ""
	}
	return "", false
}

// identify returns the object a document describes, as far as it says.
func identify(n *yaml.RNode) ObjectIdentifier {
	return ObjectIdentifier{
		Name: n.GetName(), Namespace: n.GetNamespace(),
		APIVersion: n.GetApiVersion(), Kind: n.GetKind(),
	}
}
