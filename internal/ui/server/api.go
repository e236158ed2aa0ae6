package server

import (
	"encoding/json"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/weir-gitops/weir/internal/ui/fleetview"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is every error's JSON.
type errorBody struct {
	Error string `json:"error"`
	// Mode is the server's mode, on a 401: the page offers the bearer
	// token form in cluster mode only.
	Mode string `json:"mode,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}

// writeAPIError passes a Kubernetes status through with its code and
// message (a 403 names the user, verb and resource); anything else is 500.
func writeAPIError(w http.ResponseWriter, err error) {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if code := int(status.Status().Code); code >= 400 {
			writeError(w, code, err.Error())
			return
		}
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

func filterOf(r *http.Request) fleetview.Filter {
	q := r.URL.Query()
	return fleetview.Filter{Namespace: q.Get("namespace"), Kind: q.Get("kind"), State: q.Get("state"), Q: q.Get("q")}
}

// listFleet lists the fleet as the user, in the filter's namespace only
// (a user allowed one namespace can still see it).
func listFleet(r *http.Request, sess *session) (*fleetview.Fleet, fleetview.Filter, error) {
	f := filterOf(r)
	fleet, err := fleetview.List(r.Context(), sess.client, f.Namespace)
	return fleet, f, err
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request, sess *session) {
	fleet, f, err := listFleet(r, sess)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	o := fleetview.NewOverview(fleetview.Summaries(fleet.Objects), f)
	o.Skipped, o.Hidden = fleet.Skipped, fleet.Forbidden
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request, sess *session) {
	fleet, f, err := listFleet(r, sess)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	g := fleetview.NewGraph(fleet.Objects, f)
	g.Skipped, g.Hidden = fleet.Skipped, fleet.Forbidden
	writeJSON(w, http.StatusOK, g)
}
