package kustomize

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// varNamePattern is the rule variable names must follow, as Flux documents
// and enforces it.
const varNamePattern = `^[_[:alpha:]][_[:alpha:][:digit:]]*$`

var varNameRE = regexp.MustCompile(varNamePattern)

// SubstituteOptions configure post-build substitution. The zero value is
// Flux 2.9's default: strategy WithVariables, strict.
type SubstituteOptions struct {
	// Strategy is spec.postBuild.substituteStrategy. WithVariables (or
	// empty) substitutes only when at least one variable is defined; Always
	// substitutes even with none, so that ${var:=default} still applies.
	Strategy string
	// AllowUndefined turns strict mode off (the StrictPostBuildSubstitutions
	// feature gate set to false): an undefined variable without a default
	// becomes "" instead of failing the build.
	AllowUndefined bool
}

// Substitute runs post-build variable substitution over objects and returns
// the results; the inputs are not modified, and objects left alone are
// returned as they are.
//
// Each object is rendered to YAML on its own (sorted keys, as kustomize
// renders it), expanded, and parsed back. An object labelled or annotated
// kustomize.toolkit.fluxcd.io/substitute: disabled is skipped. Newlines are
// removed from variable values, so a value cannot add YAML lines.
func Substitute(objects []*unstructured.Unstructured, vars map[string]string, opts SubstituteOptions) ([]*unstructured.Unstructured, error) {
	if len(vars) == 0 && opts.Strategy != kustomizev1.SubstituteAlways {
		return objects, nil
	}
	clean := make(map[string]string, len(vars))
	for k, v := range vars {
		clean[k] = strings.ReplaceAll(v, "\n", "")
	}
	lookup := func(name string) (string, bool) {
		v, ok := clean[name]
		return v, ok || opts.AllowUndefined
	}

	out := make([]*unstructured.Unstructured, len(objects))
	namesChecked := false
	for i, obj := range objects {
		if substitutionDisabled(obj) {
			out[i] = obj
			continue
		}
		if !namesChecked {
			// Checked at the first object substituted, as Flux does.
			for k := range clean {
				if !varNameRE.MatchString(k) {
					return nil, fmt.Errorf("post build failed for '%s': '%s' var name is invalid, must match '%s'",
						ObjectID(obj), k, varNamePattern)
				}
			}
			namesChecked = true
		}
		res, err := substituteObject(obj, lookup)
		if err != nil {
			return nil, fmt.Errorf("post build failed for '%s': %w", ObjectID(obj), err)
		}
		out[i] = res
	}
	return out, nil
}

func substitutionDisabled(obj *unstructured.Unstructured) bool {
	return obj.GetLabels()[kustomizev1.SubstituteAnnotation] == kustomizev1.SubstituteDisabledValue ||
		obj.GetAnnotations()[kustomizev1.SubstituteAnnotation] == kustomizev1.SubstituteDisabledValue
}

func substituteObject(obj *unstructured.Unstructured, lookup lookupFunc) (*unstructured.Unstructured, error) {
	j, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	expanded, err := expand(string(y), lookup)
	if err != nil {
		return nil, fmt.Errorf("variable substitution failed: %w", err)
	}
	j, err = yaml.YAMLToJSON([]byte(expanded))
	if err != nil {
		return nil, fmt.Errorf("YAMLToJSON: %w", err)
	}
	res, err := objectFromJSON(j)
	if err != nil {
		return nil, fmt.Errorf("substituted YAML is not an object: %w", err)
	}
	return res, nil
}

// ObjectID names an object the way Flux's messages do: Kind/namespace/name,
// or Kind/name for cluster-scoped objects.
func ObjectID(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + "/" + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + "/" + obj.GetName()
}
