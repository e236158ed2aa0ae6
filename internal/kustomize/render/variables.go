package render

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// Variables assembles spec.postBuild's variables: each substituteFrom
// entry in order (a later one overrides an earlier one), then
// spec.postBuild.substitute over all of them. ConfigMaps and Secrets are
// read uncached. A missing object fails unless the entry is optional.
func Variables(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization) (map[string]string, error) {
	pb := obj.Spec.PostBuild
	vars := map[string]string{}
	for _, ref := range pb.SubstituteFrom {
		key := types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}
		data, err := readVariables(ctx, reader, ref.Kind, key)
		if err != nil {
			if apierrors.IsNotFound(err) && ref.Optional {
				continue
			}
			return nil, fmt.Errorf("substitute from '%s/%s' error: %w", ref.Kind, ref.Name, err)
		}
		maps.Copy(vars, data)
	}
	maps.Copy(vars, pb.Substitute)
	return vars, nil
}

func readVariables(ctx context.Context, reader client.Reader, kind string, key types.NamespacedName) (map[string]string, error) {
	switch kind {
	case kustomizev1.SubstituteFromConfigMap:
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, key, &cm); err != nil {
			return nil, err
		}
		return cm.Data, nil
	case kustomizev1.SubstituteFromSecret:
		var s corev1.Secret
		if err := reader.Get(ctx, key, &s); err != nil {
			return nil, err
		}
		vars := make(map[string]string, len(s.Data)+len(s.StringData))
		for k, v := range s.Data {
			vars[k] = string(v)
		}
		return vars, nil
	default:
		return nil, fmt.Errorf("unsupported kind %q: want ConfigMap or Secret", kind)
	}
}
