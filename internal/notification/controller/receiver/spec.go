package receiver

import (
	"fmt"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// checkSpec reports what makes a Receiver unusable as written: a type weir
// does not serve, a filter that does not compile, or (with
// noCrossNamespaceRefs) a resource in another namespace. Each is Stalling:
// only a spec change helps.
func checkSpec(obj *notificationv1.Receiver, noCrossNamespaceRefs bool) error {
	if !Supported(obj.Spec.Type) {
		return &errs.Stalling{
			Err:    fmt.Errorf("receiver type '%s' is not supported by weir yet", obj.Spec.Type),
			Reason: notificationv1.ValidationFailedReason,
		}
	}
	if err := checkAuth(&obj.Spec); err != nil {
		return err
	}
	if expr := obj.Spec.ResourceFilter; expr != "" {
		if _, err := compileFilter(expr); err != nil {
			return &errs.Stalling{Err: fmt.Errorf("invalid spec.resourceFilter: %w", err), Reason: meta.InvalidCELExpressionReason}
		}
	}
	for i, res := range obj.Spec.Resources {
		if res.Filter != "" {
			if _, err := compileFilter(res.Filter); err != nil {
				return &errs.Stalling{Err: fmt.Errorf("invalid spec.resources[%d].filter: %w", i, err), Reason: meta.InvalidCELExpressionReason}
			}
		}
		if err := checkResource(obj.Namespace, res.CrossNamespaceObjectReference, noCrossNamespaceRefs); err != nil {
			return &errs.Stalling{Err: fmt.Errorf("spec.resources[%d]: %w", i, err), Reason: meta.AccessDeniedReason}
		}
	}
	return nil
}

// checkAuth checks what authenticates requests: a Secret for every type
// but generic-oidc, whose OIDC providers must follow the CRD's rules and
// compile instead (the CRD's CEL rules say the same; the controller checks
// again for API servers that skipped them).
func checkAuth(spec *notificationv1.ReceiverSpec) error {
	if spec.Type != notificationv1.GenericOIDCReceiver {
		if spec.SecretRef == nil {
			return &errs.Stalling{
				Err:    fmt.Errorf("spec.secretRef is required for receiver type '%s'", spec.Type),
				Reason: notificationv1.ValidationFailedReason,
			}
		}
		if len(spec.OIDCProviders) > 0 {
			return &errs.Stalling{Err: fmt.Errorf("oidcProviders can only be set when type is generic-oidc"), Reason: notificationv1.ValidationFailedReason}
		}
		return nil
	}
	if spec.SecretRef != nil {
		return &errs.Stalling{Err: fmt.Errorf("secretRef cannot be set when type is generic-oidc"), Reason: notificationv1.ValidationFailedReason}
	}
	if err := checkOIDCProviders(spec.OIDCProviders); err != nil {
		return &errs.Stalling{Err: err, Reason: notificationv1.ValidationFailedReason}
	}
	for i, p := range spec.OIDCProviders {
		if _, err := compileOIDCProvider(p); err != nil {
			return &errs.Stalling{Err: fmt.Errorf("oidcProviders[%d] (issuerURL=%q): %w", i, p.IssuerURL, err), Reason: meta.InvalidCELExpressionReason}
		}
	}
	return nil
}

// checkResource refuses references the server would refuse: a namespace
// other than the Receiver's when cross-namespace references are off, and a
// "*" namespace without a "*" name.
func checkResource(namespace string, ref notificationv1.CrossNamespaceObjectReference, noCrossNamespaceRefs bool) error {
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	if ns == "*" && ref.Name != "*" {
		return fmt.Errorf("namespace '*' requires name '*'")
	}
	if noCrossNamespaceRefs && ns != namespace {
		return fmt.Errorf("cannot access %s '%s/%s': cross-namespace references have been blocked", ref.Kind, ns, ref.Name)
	}
	return nil
}
