package ssa

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/weir-gitops/weir/api/meta"
)

// IgnorePaths returns the JSON pointers of the rules whose target selects
// obj (every rule without a target does), in the rules' order.
func IgnorePaths(rules []meta.IgnoreRule, obj *unstructured.Unstructured) ([]string, error) {
	var out []string
	for i, r := range rules {
		ok, err := Selects(r.Target, obj)
		if err != nil {
			return nil, fmt.Errorf("ignore rule %d: %w", i, err)
		}
		if ok {
			out = append(out, r.Paths...)
		}
	}
	return out, nil
}

// Selects reports whether sel picks obj, as a kustomize patch target does:
// group, version, kind, name and namespace are anchored regular
// expressions, labelSelector and annotationSelector Kubernetes label
// selectors over the labels and annotations. A nil selector picks
// everything.
func Selects(sel *meta.Selector, obj *unstructured.Unstructured) (bool, error) {
	if sel == nil {
		return true, nil
	}
	gvk := obj.GroupVersionKind()
	re, err := kustypes.NewSelectorRegex(&kustypes.Selector{
		ResId: resid.ResId{Gvk: resid.Gvk{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}, Name: sel.Name, Namespace: sel.Namespace},
	})
	if err != nil {
		return false, fmt.Errorf("invalid target: %w", err)
	}
	if !re.MatchGvk(resid.Gvk{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}) ||
		!re.MatchName(obj.GetName()) || !re.MatchNamespace(obj.GetNamespace()) {
		return false, nil
	}
	for _, s := range []struct {
		expr string
		set  map[string]string
	}{
		{sel.LabelSelector, obj.GetLabels()}, {sel.AnnotationSelector, obj.GetAnnotations()},
	} {
		if s.expr == "" {
			continue
		}
		parsed, err := labels.Parse(s.expr)
		if err != nil {
			return false, fmt.Errorf("invalid target selector %q: %w", s.expr, err)
		}
		if !parsed.Matches(labels.Set(s.set)) {
			return false, nil
		}
	}
	return true, nil
}

// RemovePointer deletes the field a JSON pointer (RFC 6901) names from
// obj; a pointer to nothing changes nothing. "" (the whole document) and
// pointers that do not start with "/" are errors.
func RemovePointer(obj map[string]any, pointer string) error {
	if !strings.HasPrefix(pointer, "/") {
		return fmt.Errorf("invalid JSON pointer %q: it must start with '/'", pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	removeTokens(obj, tokens)
	return nil
}

// removeTokens walks node along the tokens and deletes the last one.
func removeTokens(node any, tokens []string) any {
	last := len(tokens) == 1
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[tokens[0]]
		if !ok {
			return n
		}
		if last {
			delete(n, tokens[0])
			return n
		}
		n[tokens[0]] = removeTokens(child, tokens[1:])
		return n
	case []any:
		i, err := strconv.Atoi(tokens[0])
		if err != nil || i < 0 || i >= len(n) {
			return n
		}
		if last {
			return append(n[:i:i], n[i+1:]...)
		}
		n[i] = removeTokens(n[i], tokens[1:])
		return n
	default:
		return node
	}
}
