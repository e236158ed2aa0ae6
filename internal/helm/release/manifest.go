package release

import (
	"errors"
	"fmt"
	"io"
	"strings"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The metadata Helm writes on every object it applies, which the stored
// manifest does not hold.
const (
	managedByLabel             = "app.kubernetes.io/managed-by"
	managedByHelm              = "Helm"
	releaseNameAnnotation      = "meta.helm.sh/release-name"
	releaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// ManifestObjects splits a release's stored manifest into its objects
// (hooks are not in it), as Helm applied them: namespaced objects without a
// namespace in the release's namespace, with the managed-by label and the
// release annotations Helm adds. namespaced says whether an object's kind
// is namespaced (a RESTMapper's answer).
func ManifestObjects(rel *releasev1.Release, namespaced func(runtime.Object) (bool, error)) ([]*unstructured.Unstructured, error) {
	if rel == nil {
		return nil, nil
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(rel.Manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("reading the manifest of release %s/%s.v%d: %w", rel.Namespace, rel.Name, rel.Version, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetNamespace() == "" {
			ns, err := namespaced(u)
			if err != nil {
				return nil, fmt.Errorf("%s %s of release %s/%s.v%d: %w", u.GetKind(), u.GetName(), rel.Namespace, rel.Name, rel.Version, err)
			}
			if ns {
				u.SetNamespace(rel.Namespace)
			}
		}
		setHelmMetadata(u, rel.Name, rel.Namespace)
		out = append(out, u)
	}
}

func setHelmMetadata(u *unstructured.Unstructured, name, namespace string) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[managedByLabel] = managedByHelm
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[releaseNameAnnotation], annotations[releaseNamespaceAnnotation] = name, namespace
	u.SetAnnotations(annotations)
}
