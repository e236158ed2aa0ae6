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

// tokenKey is the Secret key holding a Receiver's token.
const tokenKey = "token"

// readToken returns the token of obj's spec.secretRef. Its error messages
// are Flux's, which people and scripts match on.
func readToken(ctx context.Context, r client.Reader, obj *notificationv1.Receiver) (string, error) {
	if obj.Spec.SecretRef == nil {
		return "", fmt.Errorf("spec.secretRef is required for receiver type '%s'", obj.Spec.Type)
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
		return "", fmt.Errorf("unable to read token from secret '%s' error: %w", key, err)
	}
	v, ok := s.Data[tokenKey]
	if !ok {
		return "", fmt.Errorf("invalid '%s' secret data: required field '%s'", key, tokenKey)
	}
	return string(v), nil
}
