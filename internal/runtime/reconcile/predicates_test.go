package reconcile

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

func TestArtifactChanged(t *testing.T) {
	art := func(rev, digest string) *meta.Artifact { return &meta.Artifact{Revision: rev, Digest: digest} }
	tests := []struct {
		name       string
		old, new   *meta.Artifact
		wantUpdate bool
	}{
		{name: "no artifact yet", old: nil, new: nil, wantUpdate: false},
		{name: "first artifact", old: nil, new: art("main@sha1:a", "sha256:1"), wantUpdate: true},
		{name: "same artifact (status churn)", old: art("main@sha1:a", "sha256:1"), new: art("main@sha1:a", "sha256:1"), wantUpdate: false},
		{name: "new revision", old: art("main@sha1:a", "sha256:1"), new: art("main@sha1:b", "sha256:2"), wantUpdate: true},
		{name: "same revision, new digest", old: art("main@sha1:a", "sha256:1"), new: art("main@sha1:a", "sha256:2"), wantUpdate: true},
		{name: "same artifact, moved to another server", old: &meta.Artifact{Revision: "main@sha1:a", Digest: "sha256:1", URL: "http://a/x.tar.gz"},
			new: &meta.Artifact{Revision: "main@sha1:a", Digest: "sha256:1", URL: "http://b/x.tar.gz"}, wantUpdate: true},
		{name: "artifact gone", old: art("main@sha1:a", "sha256:1"), new: nil, wantUpdate: false},
	}
	p := ArtifactChanged{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			older, newer := &sourcev1.GitRepository{}, &sourcev1.GitRepository{}
			older.Status.Artifact, newer.Status.Artifact = tt.old, tt.new
			if got := p.Update(event.UpdateEvent{ObjectOld: older, ObjectNew: newer}); got != tt.wantUpdate {
				t.Errorf("Update = %v, want %v", got, tt.wantUpdate)
			}
		})
	}
	if !p.Create(event.CreateEvent{}) || p.Delete(event.DeleteEvent{}) || p.Generic(event.GenericEvent{}) {
		t.Error("Create must pass, Delete and Generic must not")
	}
}
