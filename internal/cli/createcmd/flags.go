package createcmd

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// enum is a string flag limited to a list of values; its type, as help
// shows it, is the list ("generic|azure|github"), as in the flux CLI.
type enum struct {
	value   string
	allowed []string
	// what names the flag in errors: "git provider".
	what string
}

func newEnum(def, what string, allowed ...string) *enum {
	return &enum{value: def, allowed: allowed, what: what}
}

func (e *enum) String() string { return e.value }
func (e *enum) Type() string   { return strings.Join(e.allowed, "|") }
func (e *enum) Set(s string) error {
	if s == "" {
		e.value = ""
		return nil
	}
	if !slices.Contains(e.allowed, s) {
		return fmt.Errorf("unsupported %s '%s', must be one of: %s", e.what, s, strings.Join(e.allowed, ", "))
	}
	e.value = s
	return nil
}

// safeRelativePath is --path of `create kustomization`: cleaned, kept
// inside the source's root, and written with a leading "./".
type safeRelativePath string

func (p *safeRelativePath) String() string { return string(*p) }
func (p *safeRelativePath) Type() string   { return "safeRelativePath" }
func (p *safeRelativePath) Set(s string) error {
	if s == "" {
		*p = ""
		return nil
	}
	*p = safeRelativePath("." + path.Clean("/"+strings.ReplaceAll(s, "\\", "/")))
	if *p == "." {
		*p = "./"
	}
	return nil
}

// sourceKinds are the kinds a Kustomization's --source may name.
var sourceKinds = []string{"OCIRepository", "GitRepository", "Bucket"}

// sourceRef is --source of `create kustomization`: [Kind/]name[.namespace]
// as in the flux CLI, or Kind/namespace/name; the kind defaults to
// GitRepository and is matched ignoring case.
type sourceRef struct {
	kind, name, namespace string
}

func (r *sourceRef) String() string {
	if r.name == "" {
		return ""
	}
	s := r.kind + "/" + r.name
	if r.namespace != "" {
		s += "." + r.namespace
	}
	return s
}

func (r *sourceRef) Type() string { return "string" }

func (r *sourceRef) Set(s string) error {
	ref, err := parseSourceRef(s, "source", "GitRepository", sourceKinds)
	if err != nil {
		return err
	}
	*r = ref
	return nil
}

// parseSourceRef reads [Kind/]name[.namespace] or Kind/namespace/name; what
// names the flag's value in errors ("source"), defaultKind stands in for a
// missing kind, and the kind must be one of allowed (matched ignoring case).
func parseSourceRef(s, what, defaultKind string, allowed []string) (sourceRef, error) {
	if s == "" {
		return sourceRef{}, fmt.Errorf("no %s given, please specify the %s in the format '[<kind>/]<name>.<namespace>'", what, what)
	}
	parts := strings.Split(s, "/")
	kind, name, ns := defaultKind, "", ""
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		kind, name = parts[0], parts[1]
	case 3:
		kind, ns, name = parts[0], parts[1], parts[2]
	default:
		return sourceRef{}, fmt.Errorf("invalid %s '%s', must be in the format '[<kind>/]<name>.<namespace>'", what, s)
	}
	if len(parts) < 3 {
		if i := strings.LastIndex(name, "."); i > 0 {
			name, ns = name[:i], name[i+1:]
		}
	}
	found := ""
	for _, k := range allowed {
		if strings.EqualFold(k, kind) {
			found = k
		}
	}
	if found == "" {
		return sourceRef{}, fmt.Errorf("%s kind '%s' is not supported, must be one of: %s", what, kind, strings.Join(allowed, ", "))
	}
	if name == "" {
		return sourceRef{}, fmt.Errorf("no %s name given in '%s'", what, s)
	}
	return sourceRef{kind: found, name: name, namespace: ns}, nil
}
