package server

import (
	"errors"
	"net/http"

	"github.com/weir-gitops/weir/internal/ui/objectview"
)

// refOf is the object a /api/objects/{kind}/{namespace}/{name} path names.
func refOf(r *http.Request) objectview.Ref {
	return objectview.Ref{Kind: r.PathValue("kind"), Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
}

// writeViewError answers an objectview error: an unknown kind is 404, a
// Kubernetes status passes through.
func writeViewError(w http.ResponseWriter, err error) {
	if errors.Is(err, objectview.ErrUnknownKind) {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeAPIError(w, err)
}

func (s *Server) object(w http.ResponseWriter, r *http.Request, sess *session) {
	ref := refOf(r)
	d, err := objectview.Get(r.Context(), sess.client, sess.cfg, ref)
	if err != nil {
		writeViewError(w, err)
		return
	}
	if d.Permissions, err = objectview.Permissions(r.Context(), sess.client, ref, sess.user.Name); err != nil {
		writeViewError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) objectEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	events, err := objectview.Events(r.Context(), sess.client, refOf(r))
	if err != nil {
		writeViewError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, events)
}

func (s *Server) objectDiff(w http.ResponseWriter, r *http.Request, sess *session) {
	ref := refOf(r)
	d, err := objectview.Diff(r.Context(), sess.client, sess.cfg, ref)
	if errors.Is(err, objectview.ErrNotApplicable) {
		writeJSON(w, http.StatusOK, objectview.NotApplicable(ref.Kind))
		return
	}
	if err != nil {
		writeViewError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
