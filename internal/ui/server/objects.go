package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

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

// podLogs serves the last lines of each container's log of a Pod, read
// as the user; a log the user may not read is a sentence in its entry.
func (s *Server) podLogs(w http.ResponseWriter, r *http.Request, sess *session) {
	logs, err := objectview.PodLogs(r.Context(), sess.cfg, r.PathValue("namespace"), r.PathValue("name"), objectview.TailLines)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, logs)
}

// followLog streams one container's log as server-sent events (event:
// log, one line each) until the page closes it; event: failed carries the
// sentence when the log cannot be read, event: end when the log ends.
func (s *Server) followLog(w http.ResponseWriter, r *http.Request, sess *session) {
	rc := startEvents(w)
	_ = rc.Flush()
	send := func(event, data string) {
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, strings.ReplaceAll(data, "\n", " "))
		_ = rc.Flush()
	}
	err := objectview.FollowLog(r.Context(), sess.cfg, r.PathValue("namespace"), r.PathValue("name"),
		r.PathValue("container"), 0, func(line string) { send("log", line) })
	if r.Context().Err() != nil {
		return
	}
	if err != nil {
		send("failed", err.Error())
		return
	}
	send("end", "")
}
