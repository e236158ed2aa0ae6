package events

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/scheme"
)

func TestReadyTransition(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: msg}
	}
	tests := []struct {
		name          string
		before, after *metav1.Condition
		want          string // the Kubernetes event, "" for none
	}{
		{"became ready", nil, ready("True", "Succeeded", "found 3 tags"), "Normal Succeeded found 3 tags"},
		{"recovered", ready("False", "ReadOperationFailed", "scan failed"), ready("True", "Succeeded", "found 3 tags"), "Normal Succeeded found 3 tags"},
		{"new message", ready("True", "Succeeded", "found 3 tags"), ready("True", "Succeeded", "found 4 tags"), "Normal Succeeded found 4 tags"},
		{"unchanged", ready("True", "Succeeded", "found 3 tags"), ready("True", "Succeeded", "found 3 tags"), ""},
		{"failing", ready("False", "ReadOperationFailed", "scan failed"), ready("False", "ReadOperationFailed", "scan failed"), "Warning ReadOperationFailed scan failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kube := record.NewFakeRecorder(2)
			rec := NewRecorder(kube, scheme.Must(), "image-reflector-controller", "", "")
			obj := &imagev1.ImageRepository{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "apps"}}
			obj.Status.Conditions = []metav1.Condition{*tt.after}
			recorded := rec.ReadyTransition(context.Background(), obj, tt.before)
			var got string
			select {
			case got = <-kube.Events:
			default:
			}
			if got != tt.want || recorded != (tt.want != "") {
				t.Errorf("event %q (recorded %v), want %q", got, recorded, tt.want)
			}
		})
	}
	var nilRecorder *Recorder
	if nilRecorder.ReadyTransition(context.Background(), &imagev1.ImageRepository{}, nil) {
		t.Error("a nil Recorder records nothing")
	}
}
