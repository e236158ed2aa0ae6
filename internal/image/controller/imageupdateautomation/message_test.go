package imageupdateautomation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/image/setters"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestCommitMessage(t *testing.T) {
	dep := setters.ObjectIdentifier{Kind: "Deployment", Name: "app", Namespace: "apps", APIVersion: "apps/v1"}
	result := setters.Result{FileChanges: map[string]setters.ObjectChanges{
		"app.yaml": {dep: {{OldValue: "app:1", NewValue: "app:2", Setter: "apps:app"}}},
	}}
	tests := []struct {
		name, template string
		values         map[string]string
		want           string
		reason         string
		stalled        bool
	}{
		{name: "default", want: "Update from image update automation"},
		{name: "automation object and values", template: "{{ .AutomationObject }} in {{ .Values.env }}", values: map[string]string{"env": "prod"}, want: "flux-system/auto in prod"},
		{name: "changes", template: "{{ range .Changed.Changes }}{{ .Setter }}: {{ .OldValue }} -> {{ .NewValue }}{{ end }}", want: "apps:app: app:1 -> app:2"},
		{name: "files and objects", template: "{{ range $f, $o := .Changed.FileChanges }}{{ $f }}{{ end }} {{ range $id, $c := .Changed.Objects }}{{ $id.APIVersion }} {{ $id.Kind }} {{ $id.Namespace }}/{{ $id.Name }} {{ len $c }}{{ end }}", want: "app.yaml apps/v1 Deployment apps/app 1"},
		{name: "sprig", template: `{{ "ABC" | lower }} {{ sha256sum "x" | trunc 7 }}`, want: "abc 2d71164"},
		{name: "no clock", template: `{{ now }}`, reason: imagev1.GitOperationFailedReason},
		{name: "parse error", template: `{{ .Changed`, reason: imagev1.GitOperationFailedReason},
		{name: "removed Updated", template: `{{ .Updated.Images }}`, reason: imagev1.RemovedTemplateFieldReason, stalled: true},
		{name: "removed ImageResult", template: `{{ .Changed.ImageResult }}`, reason: imagev1.RemovedTemplateFieldReason, stalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &imagev1.ImageUpdateAutomation{
				ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: "flux-system"},
				Spec: imagev1.ImageUpdateAutomationSpec{GitSpec: &imagev1.GitSpec{Commit: imagev1.CommitSpec{
					MessageTemplate: tt.template, MessageTemplateValues: tt.values,
				}}},
			}
			got, err := commitMessage(obj, result)
			if tt.reason != "" {
				if err == nil || errs.Reason(err, "") != tt.reason || errs.IsStalling(err) != tt.stalled {
					t.Fatalf("err = %v (reason %q), want reason %s stalled=%v", err, errs.Reason(err, ""), tt.reason, tt.stalled)
				}
				if tt.stalled && !strings.Contains(err.Error(), "https://fluxcd.io/flux/components/image/imageupdateautomations/#message-template") {
					t.Errorf("message %q", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPushSummary(t *testing.T) {
	p := &pushed{commit: "0123456789abcdef", branch: "main", message: "Update\n\nbody"}
	if got := pushSummary(p); got != "pushed commit '0123456' to branch 'main'\nUpdate\n\nbody" {
		t.Errorf("got %q", got)
	}
	p.refspec = "refs/heads/main:refs/for/main"
	if got := pushSummary(p); got != "pushed commit '0123456' to branch 'main' and refspecs 'refs/heads/main:refs/for/main'\nUpdate\n\nbody" {
		t.Errorf("got %q", got)
	}
}
