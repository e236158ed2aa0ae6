package receiver

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		out     *outcome
		err     error
		ready   metav1.ConditionStatus
		reason  string
		message string
		stalled bool
		path    string
	}{
		{"ready", &outcome{webhookPath: "/hook/abc"}, nil, metav1.ConditionTrue, meta.SucceededReason,
			"Receiver initialized for path: /hook/abc", false, "/hook/abc"},
		{"token missing keeps the old path", &outcome{}, &errs.Generic{Err: boom, Reason: notificationv1.TokenNotFoundReason},
			metav1.ConditionFalse, notificationv1.TokenNotFoundReason, "boom", false, "/hook/old"},
		{"stall clears the path", &outcome{}, &errs.Stalling{Err: boom, Reason: notificationv1.ValidationFailedReason},
			metav1.ConditionFalse, notificationv1.ValidationFailedReason, "boom", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &notificationv1.Receiver{ObjectMeta: metav1.ObjectMeta{Generation: 3,
				Annotations: map[string]string{meta.ReconcileRequestAnnotation: "now"}}}
			obj.Status.WebhookPath = "/hook/old"
			applyStatus(obj, tt.out, tt.err)
			c := conditions.Get(obj, meta.ReadyCondition)
			if c.Status != tt.ready || c.Reason != tt.reason || c.Message != tt.message {
				t.Errorf("Ready = %s %s %q", c.Status, c.Reason, c.Message)
			}
			if conditions.IsTrue(obj, meta.StalledCondition) != tt.stalled {
				t.Errorf("Stalled = %v", !tt.stalled)
			}
			if obj.Status.WebhookPath != tt.path {
				t.Errorf("webhookPath = %q, want %q", obj.Status.WebhookPath, tt.path)
			}
			if obj.Status.ObservedGeneration != 3 || obj.Status.LastHandledReconcileAt != "now" {
				t.Errorf("observedGeneration %d, lastHandledReconcileAt %q", obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
			}
		})
	}
}

func TestCheckSpec(t *testing.T) {
	res := func(ns, name string) notificationv1.ReceiverResource {
		return notificationv1.ReceiverResource{CrossNamespaceObjectReference: notificationv1.CrossNamespaceObjectReference{
			Kind: "GitRepository", Name: name, Namespace: ns}}
	}
	tests := []struct {
		name    string
		mutate  func(*notificationv1.Receiver)
		noCross bool
		reason  string // "" means valid
	}{
		{"valid", func(*notificationv1.Receiver) {}, true, ""},
		{"same namespace spelled out", func(r *notificationv1.Receiver) { r.Spec.Resources = []notificationv1.ReceiverResource{res("ns", "a")} }, true, ""},
		{"cross namespace allowed", func(r *notificationv1.Receiver) {
			r.Spec.Resources = []notificationv1.ReceiverResource{res("other", "a")}
		}, false, ""},
		{"cross namespace blocked", func(r *notificationv1.Receiver) {
			r.Spec.Resources = []notificationv1.ReceiverResource{res("other", "a")}
		}, true, meta.AccessDeniedReason},
		{"namespace * needs name *", func(r *notificationv1.Receiver) { r.Spec.Resources = []notificationv1.ReceiverResource{res("*", "a")} }, false, meta.AccessDeniedReason},
		{"unsupported type", func(r *notificationv1.Receiver) { r.Spec.Type = "svn" }, false, notificationv1.ValidationFailedReason},
		{"cdevents", func(r *notificationv1.Receiver) { r.Spec.Type = notificationv1.CDEventsReceiver }, false, ""},
		{"oidc", func(r *notificationv1.Receiver) {
			r.Spec.Type = notificationv1.GenericOIDCReceiver
			r.Spec.SecretRef = nil
			r.Spec.OIDCProviders = []notificationv1.OIDCProvider{{IssuerURL: "https://issuer.example.com",
				Validations: []notificationv1.OIDCValidation{{Expression: "claims.sub == 'x'", Message: "m"}}}}
		}, false, ""},
		{"oidc without providers", func(r *notificationv1.Receiver) {
			r.Spec.Type = notificationv1.GenericOIDCReceiver
			r.Spec.SecretRef = nil
		}, false, notificationv1.ValidationFailedReason},
		{"oidc with a secret", func(r *notificationv1.Receiver) {
			r.Spec.Type = notificationv1.GenericOIDCReceiver
			r.Spec.OIDCProviders = []notificationv1.OIDCProvider{{IssuerURL: "https://issuer.example.com",
				Validations: []notificationv1.OIDCValidation{{Expression: "true", Message: "m"}}}}
		}, false, notificationv1.ValidationFailedReason},
		{"providers on another type", func(r *notificationv1.Receiver) {
			r.Spec.OIDCProviders = []notificationv1.OIDCProvider{{IssuerURL: "https://issuer.example.com"}}
		}, false, notificationv1.ValidationFailedReason},
		{"oidc validation not bool", func(r *notificationv1.Receiver) {
			r.Spec.Type = notificationv1.GenericOIDCReceiver
			r.Spec.SecretRef = nil
			r.Spec.OIDCProviders = []notificationv1.OIDCProvider{{IssuerURL: "https://issuer.example.com",
				Validations: []notificationv1.OIDCValidation{{Expression: "'yes'", Message: "m"}}}}
		}, false, meta.InvalidCELExpressionReason},
		{"filter sees claims", func(r *notificationv1.Receiver) { r.Spec.ResourceFilter = "claims.?sub.orValue('') == ''" }, false, ""},
		{"bad resource filter", func(r *notificationv1.Receiver) { r.Spec.ResourceFilter = "1 +" }, false, meta.InvalidCELExpressionReason},
		{"non-bool filter", func(r *notificationv1.Receiver) { r.Spec.Resources[0].Filter = "'x'" }, false, meta.InvalidCELExpressionReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &notificationv1.Receiver{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
				Spec: notificationv1.ReceiverSpec{Type: notificationv1.GenericReceiver,
					SecretRef: &meta.LocalObjectReference{Name: "s"}, Resources: []notificationv1.ReceiverResource{res("", "a")}}}
			tt.mutate(obj)
			err := checkSpec(obj, tt.noCross)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("checkSpec: %v", err)
				}
				return
			}
			if !errs.IsStalling(err) || errs.Reason(err, "") != tt.reason {
				t.Fatalf("checkSpec = %v (reason %q), want stall %s", err, errs.Reason(err, ""), tt.reason)
			}
		})
	}
}
