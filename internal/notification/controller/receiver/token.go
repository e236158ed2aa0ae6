package receiver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

// Keys of a Receiver's Secret.
const (
	// tokenKey holds the shared token of every type but generic-oidc.
	tokenKey = "token"
	// emailKey (gcr) is the service account the Pub/Sub push tokens name.
	emailKey = "email"
	// audienceKey (gcr) is the audience the Pub/Sub push tokens carry.
	audienceKey = "audience"
)

// readSecret returns the token of obj's spec.secretRef and the Secret's
// data. A generic-oidc Receiver has no Secret: its token is empty, which
// is also what its webhook path is derived from (as the flux CLI computes
// it). Error messages are Flux's, which people and scripts match on.
func readSecret(ctx context.Context, r client.Reader, obj *notificationv1.Receiver) (string, map[string][]byte, error) {
	if obj.Spec.Type == notificationv1.GenericOIDCReceiver {
		return "", nil, nil
	}
	if obj.Spec.SecretRef == nil {
		return "", nil, fmt.Errorf("spec.secretRef is required for receiver type '%s'", obj.Spec.Type)
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.SecretRef.Name}
	var s corev1.Secret
	if err := r.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			// Flux reads through a cache, whose NotFound names the kind
			// ("Secret"); the API server's names the resource ("secrets").
			// Say it Flux's way whichever reader is used.
			err = apierrors.NewNotFound(schema.GroupResource{Resource: "Secret"}, key.Name)
		}
		return "", nil, fmt.Errorf("unable to read token from secret '%s' error: %w", key, err)
	}
	v, ok := s.Data[tokenKey]
	if !ok {
		return "", nil, fmt.Errorf("invalid '%s' secret data: required field '%s'", key, tokenKey)
	}
	if obj.Spec.Type == notificationv1.GCRReceiver {
		// Flux 2.9 requires both: without them any Google-signed token
		// for any audience would pass.
		for _, k := range []string{emailKey, audienceKey} {
			if len(s.Data[k]) == 0 {
				return "", nil, fmt.Errorf("invalid '%s' secret data: required field '%s' for GCR receiver", key, k)
			}
		}
	}
	return string(v), s.Data, nil
}
