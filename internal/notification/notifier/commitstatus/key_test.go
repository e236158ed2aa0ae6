package commitstatus

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	event := map[string]any{
		"involvedObject": map[string]any{"kind": "Kustomization", "name": "apps"},
		"metadata":       map[string]any{"cluster": "prod-eu"},
	}
	provider := map[string]any{"metadata": map[string]any{"uid": "0c9c2e41-d2f9"}}
	alert := map[string]any{"metadata": map[string]any{"name": "github-status"}}
	tests := []struct {
		expr    string
		want    string
		wantErr string
	}{
		{expr: `event.involvedObject.kind + "/" + event.involvedObject.name + "/" + event.metadata.cluster`,
			want: "Kustomization/apps/prod-eu"},
		{expr: `alert.metadata.name + "/" + provider.metadata.uid.split("-")[0]`, want: "github-status/0c9c2e41"},
		{expr: `(event.involvedObject.kind + '/' + event.involvedObject.name + '/' + event.metadata.cluster).lowerAscii()`,
			want: "kustomization/apps/prod-eu"},
		{expr: `"flux/" + alert.metadata.name`, want: "flux/github-status"},
		{expr: `event.metadata.missing`, wantErr: "evaluating"},
		{expr: `1 + 1`, wantErr: "not a string"},
		{expr: `""`, wantErr: "empty"},
		{expr: `event.(`, wantErr: "compile"},
	}
	for _, tt := range tests {
		got, err := Key(tt.expr, event, provider, alert)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Key(%s) = %q, %v; want an error saying %q", tt.expr, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Key(%s) = %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
}
