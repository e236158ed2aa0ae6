package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

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
	fleet, err := fleetview.List(r.Context(), sess.lister, f.Namespace)
	return fleet, f, err
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request, sess *session) {
	fleet, f, err := listFleet(r, sess)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	page, err := s.pageOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	o := fleetview.NewOverview(fleetview.Summaries(fleet.Objects), f)
	page.Apply(&o)
	o.Skipped, o.Hidden = fleet.Skipped, fleet.Forbidden
	writeJSON(w, http.StatusOK, o)
}

// maxPageSize bounds the limit a request may ask for.
const maxPageSize = 1000

// pageOf reads the page an /api/overview request asks for: sort (one of
// fleetview.Columns), dir (asc or desc), offset and limit.
func (s *Server) pageOf(r *http.Request) (fleetview.Page, error) {
	q := r.URL.Query()
	p := fleetview.Page{Sort: q.Get("sort"), Desc: q.Get("dir") == "desc", Limit: s.opts.PageSize, Now: s.opts.Now()}
	if p.Sort != "" && !slices.Contains(fleetview.Columns, p.Sort) {
		return p, fmt.Errorf("sort=%q: not a column (%s)", p.Sort, strings.Join(fleetview.Columns, ", "))
	}
	if d := q.Get("dir"); d != "" && d != "asc" && d != "desc" {
		return p, fmt.Errorf("dir=%q: want asc or desc", d)
	}
	for name, into := range map[string]*int{"offset": &p.Offset, "limit": &p.Limit} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (name == "limit" && (n == 0 || n > maxPageSize)) {
			return p, fmt.Errorf("%s=%q: want a whole number (a limit from 1 to %d)", name, v, maxPageSize)
		}
		*into = n
	}
	return p, nil
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
