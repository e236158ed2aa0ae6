package githostserver

import (
	"net/http"
	"strconv"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// github answers GitHub Enterprise Server's REST API under /api/v3.
func (s *Server) github(w http.ResponseWriter, method string, p []string, body map[string]any) {
	if len(p) < 3 || p[0] != "api" || p[1] != "v3" {
		notFound(w)
		return
	}
	p = p[2:]
	switch {
	case method == http.MethodPost && match(p, "orgs", "*", "repos"):
		if !s.hasGroup(p[1]) {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusCreated, s.githubRepo(s.create(p[1], str(body, "name"), githubVisibility(body), str(body, "description"), "")))
	case method == http.MethodPost && match(p, "user", "repos"):
		writeJSON(w, http.StatusCreated, s.githubRepo(s.create(s.opts.User, str(body, "name"), githubVisibility(body), str(body, "description"), "")))
	case method == http.MethodPut && match(p, "orgs", "*", "teams", "*", "repos", "*", "*"):
		r := s.repos[p[5]+"/"+p[6]]
		if r == nil || !s.hasTeam(p[3]) {
			notFound(w)
			return
		}
		r.Teams[p[3]] = str(body, "permission")
		w.WriteHeader(http.StatusNoContent)
	case len(p) >= 3 && p[0] == "repos":
		r := s.repos[p[1]+"/"+p[2]]
		if r == nil {
			notFound(w)
			return
		}
		s.githubRepoResource(w, method, r, p[3:], body)
	default:
		notFound(w)
	}
}

func (s *Server) githubRepoResource(w http.ResponseWriter, method string, r *Repo, rest []string, body map[string]any) {
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.githubRepo(r))
	case len(rest) == 0 && method == http.MethodPatch:
		if _, ok := body["private"]; ok {
			r.Visibility = githubVisibility(body)
		}
		if d := str(body, "description"); d != "" {
			r.Description = d
		}
		writeJSON(w, http.StatusOK, s.githubRepo(r))
	case method == http.MethodGet && match(rest, "teams"):
		teams := []map[string]any{}
		for _, slug := range sortedKeys(r.Teams) {
			teams = append(teams, map[string]any{"slug": slug, "name": slug, "permission": r.Teams[slug]})
		}
		writeJSON(w, http.StatusOK, teams)
	case len(rest) >= 1 && rest[0] == "keys":
		s.keys(w, method, r, rest[1:], body, readOnlyKeys)
	default:
		notFound(w)
	}
}

func githubVisibility(body map[string]any) string {
	if v := str(body, "visibility"); v != "" {
		return v
	}
	if boolean(body, "private") {
		return "private"
	}
	return "public"
}

func (s *Server) githubRepo(r *Repo) map[string]any {
	httpURL, sshURL := s.cloneURLs(r)
	return map[string]any{
		"id": r.ID, "name": r.Name, "full_name": r.Owner + "/" + r.Name, "owner": map[string]any{"login": r.Owner},
		"private": r.Visibility != "public", "visibility": r.Visibility, "description": r.Description,
		"html_url": "https://" + s.Hostname + "/" + r.Owner + "/" + r.Name, "clone_url": httpURL, "ssh_url": sshURL,
		"default_branch": r.DefaultBranch,
	}
}

// gitea answers Gitea's REST API under /api/v1.
func (s *Server) gitea(w http.ResponseWriter, method string, p []string, body map[string]any) {
	if len(p) < 3 || p[0] != "api" || p[1] != "v1" {
		notFound(w)
		return
	}
	p = p[2:]
	switch {
	case method == http.MethodPost && match(p, "orgs", "*", "repos"):
		if !s.hasGroup(p[1]) {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusCreated, s.giteaRepo(s.create(p[1], str(body, "name"), giteaVisibility(body), str(body, "description"), str(body, "default_branch"))))
	case method == http.MethodPost && match(p, "user", "repos"):
		writeJSON(w, http.StatusCreated, s.giteaRepo(s.create(s.opts.User, str(body, "name"), giteaVisibility(body), str(body, "description"), str(body, "default_branch"))))
	case len(p) >= 3 && p[0] == "repos":
		r := s.repos[p[1]+"/"+p[2]]
		if r == nil {
			notFound(w)
			return
		}
		s.giteaRepoResource(w, method, r, p[3:], body)
	default:
		notFound(w)
	}
}

func (s *Server) giteaRepoResource(w http.ResponseWriter, method string, r *Repo, rest []string, body map[string]any) {
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.giteaRepo(r))
	case len(rest) == 0 && method == http.MethodPatch:
		if _, ok := body["private"]; ok {
			r.Visibility = giteaVisibility(body)
		}
		if d := str(body, "description"); d != "" {
			r.Description = d
		}
		writeJSON(w, http.StatusOK, s.giteaRepo(r))
	case method == http.MethodGet && match(rest, "teams", "*"):
		perm, ok := r.Teams[rest[1]]
		if !ok {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": 7, "name": rest[1], "permission": perm})
	case method == http.MethodPut && match(rest, "teams", "*"):
		if !s.hasTeam(rest[1]) {
			notFound(w)
			return
		}
		r.Teams[rest[1]] = "write"
		w.WriteHeader(http.StatusNoContent)
	case len(rest) >= 1 && rest[0] == "keys":
		s.keys(w, method, r, rest[1:], body, readOnlyKeys)
	default:
		notFound(w)
	}
}

func giteaVisibility(body map[string]any) string {
	if boolean(body, "private") {
		return "private"
	}
	return "public"
}

func (s *Server) giteaRepo(r *Repo) map[string]any {
	httpURL, sshURL := s.cloneURLs(r)
	return map[string]any{
		"id": r.ID, "name": r.Name, "full_name": r.Owner + "/" + r.Name, "owner": map[string]any{"login": r.Owner},
		"private": r.Visibility != "public", "description": r.Description,
		"html_url": "https://" + s.Hostname + "/" + r.Owner + "/" + r.Name, "clone_url": httpURL, "ssh_url": sshURL,
		"default_branch": r.DefaultBranch,
	}
}

// gitlabLevels are the access levels by name, as the fake stores them.
var gitlabLevels = map[string]int64{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40, "owner": 50}

// gitlab answers GitLab's REST API under /api/v4. Projects are found by
// ID or by their URL-encoded path.
func (s *Server) gitlab(w http.ResponseWriter, method string, p []string, body map[string]any) {
	if len(p) < 3 || p[0] != "api" || p[1] != "v4" {
		notFound(w)
		return
	}
	p = p[2:]
	switch {
	case method == http.MethodGet && match(p, "groups", "*"):
		for i, g := range append(append([]string(nil), s.opts.Groups...), s.opts.Teams...) {
			if g == p[1] {
				writeJSON(w, http.StatusOK, map[string]any{"id": 10 + i, "full_path": g, "path": g})
				return
			}
		}
		notFound(w)
	case method == http.MethodPost && match(p, "projects"):
		owner := s.opts.User
		if ns, ok := body["namespace_id"].(float64); ok {
			owner = ""
			for i, g := range s.opts.Groups {
				if float64(10+i) == ns {
					owner = g
				}
			}
			if owner == "" {
				notFound(w)
				return
			}
		}
		vis := str(body, "visibility")
		if vis == "" {
			vis = "private"
		}
		writeJSON(w, http.StatusCreated, s.gitlabProject(s.create(owner, str(body, "path"), vis, str(body, "description"), str(body, "default_branch"))))
	case len(p) >= 2 && p[0] == "projects":
		r := s.project(p[1])
		if r == nil {
			notFound(w)
			return
		}
		s.gitlabProjectResource(w, method, r, p[2:], body)
	default:
		notFound(w)
	}
}

func (s *Server) project(id string) *Repo {
	if r, ok := s.repos[id]; ok {
		return r
	}
	for _, r := range s.repos {
		if itoa(r.ID) == id {
			return r
		}
	}
	return nil
}

func (s *Server) gitlabProjectResource(w http.ResponseWriter, method string, r *Repo, rest []string, body map[string]any) {
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.gitlabProject(r))
	case len(rest) == 0 && method == http.MethodPut:
		if v := str(body, "visibility"); v != "" {
			r.Visibility = v
		}
		if d := str(body, "description"); d != "" {
			r.Description = d
		}
		writeJSON(w, http.StatusOK, s.gitlabProject(r))
	case method == http.MethodPost && match(rest, "share"):
		id, _ := body["group_id"].(float64)
		level, _ := body["group_access"].(float64)
		for i, g := range append(append([]string(nil), s.opts.Groups...), s.opts.Teams...) {
			if float64(10+i) == id {
				for name, l := range gitlabLevels {
					if float64(l) == level {
						r.Teams[g] = name
					}
				}
				writeJSON(w, http.StatusCreated, map[string]any{"group_id": id, "group_access": level})
				return
			}
		}
		notFound(w)
	case len(rest) >= 1 && rest[0] == "deploy_keys":
		s.keys(w, method, r, rest[1:], body, canPushKeys)
	default:
		notFound(w)
	}
}

func (s *Server) gitlabProject(r *Repo) map[string]any {
	httpURL, sshURL := s.cloneURLs(r)
	shared := []map[string]any{}
	for _, g := range sortedKeys(r.Teams) {
		shared = append(shared, map[string]any{"group_id": 0, "group_name": g, "group_full_path": g,
			"group_access_level": gitlabLevels[r.Teams[g]]})
	}
	return map[string]any{
		"id": r.ID, "name": r.Name, "path": r.Name, "path_with_namespace": r.Owner + "/" + r.Name,
		"visibility": r.Visibility, "description": r.Description,
		"web_url": "https://" + s.Hostname + "/" + r.Owner + "/" + r.Name, "http_url_to_repo": httpURL, "ssh_url_to_repo": sshURL,
		"default_branch": r.DefaultBranch, "shared_with_groups": shared,
	}
}

// match reports whether path has the pattern's segments, "*" matching
// any one.
func match(path []string, pattern ...string) bool {
	if len(path) != len(pattern) {
		return false
	}
	for i, p := range pattern {
		if p != "*" && p != path[i] {
			return false
		}
	}
	return true
}

// keyFields are a host's JSON fields of a deploy key, and how it reads a
// new key from a request body.
type keyFields struct {
	json     func(Key) map[string]any
	readOnly func(body map[string]any) bool
}

var (
	readOnlyKeys = keyFields{
		json: func(k Key) map[string]any {
			return map[string]any{"id": k.ID, "title": k.Title, "key": k.Key, "read_only": k.ReadOnly}
		},
		readOnly: func(body map[string]any) bool { return boolean(body, "read_only") },
	}
	canPushKeys = keyFields{
		json: func(k Key) map[string]any {
			return map[string]any{"id": k.ID, "title": k.Title, "key": k.Key, "can_push": !k.ReadOnly}
		},
		readOnly: func(body map[string]any) bool { return !boolean(body, "can_push") },
	}
)

// keys answers a repository's deploy keys: list, add, delete by ID.
func (s *Server) keys(w http.ResponseWriter, method string, r *Repo, rest []string, body map[string]any, f keyFields) {
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		keys := []map[string]any{}
		for _, k := range r.Keys {
			keys = append(keys, f.json(k))
		}
		writeJSON(w, http.StatusOK, keys)
	case len(rest) == 0 && method == http.MethodPost:
		writeJSON(w, http.StatusCreated, f.json(s.addKey(r, str(body, "title"), str(body, "key"), f.readOnly(body))))
	case len(rest) == 1 && method == http.MethodDelete && s.deleteKey(r, rest[0]):
		w.WriteHeader(http.StatusNoContent)
	default:
		notFound(w)
	}
}
