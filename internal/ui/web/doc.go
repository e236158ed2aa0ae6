// Package web holds the browser side of `weir ui`, embedded in the binary:
// index.html, app.css and plain ES modules under js/ (no framework, no
// build step, nothing fetched from elsewhere at run time, no inline script
// or style, so the server's Content-Security-Policy can be
// default-src 'self'). internal/ui/server serves FS at "/" and index.html
// for every other non-/api/ path; the router in js/router.js then picks
// the view from the path ("/", "/graph", "/objects/{kind}/{namespace}/{name}")
// and keeps the filters in the query string (?namespace=&kind=&state=&q=),
// so a copied URL reproduces the view.
//
// # Element ids and data-testid values the browser tests rely on
//
// Page frame (every view):
//   - #skip-link: "Skip to main content", the first Tab stop; #main: the view.
//   - #main[data-loaded="true"]: set once the view's data is shown.
//   - #live-indicator (data-testid="live-indicator"), data-state
//     connecting | live | offline: the EventSource on /api/stream.
//   - #whoami: "user (mode)" from /api/whoami.
//   - #nav-overview, #nav-graph: the views.
//   - #reason-dialog with #reason-input, #reason-confirm, #reason-cancel:
//     the reason asked before a suspend.
//   - Without a session (/api/whoami answers 401): #main[data-loaded="login"]
//     with #login-message (the server's words), #login-form, #login-token,
//     #login-submit and #login-status (cluster mode's bearer-token login).
//
// Filter bar (overview and graph): #filters with #search (data-testid
// "search", focused by "/"), #filter-namespace, #filter-kind, #filter-state.
//
// Overview ("/"):
//   - data-testid="attention" (an ol) of data-testid="attention-item" with
//     data-id "Kind/namespace/name" and data-state; data-testid
//     "attention-empty" when nothing needs attention.
//   - data-testid="counts": the table of counts, a row per kind (data-kind).
//   - data-testid="suspended" of data-testid="suspended-item" (data-id).
//   - data-testid="objects-table" with tr[data-testid="object-row"]
//     (data-id, data-state), whose first cell is the selection checkbox;
//     #select-all; data-testid="bulk-actions" holds #bulk-reconcile,
//     #bulk-reconcile-source, #bulk-suspend, #bulk-resume and
//     #selection-count; #bulk-status says what the last action did.
//
// Graph ("/graph"):
//   - data-testid="graph-svg"; #main[data-nodes] is the node count shown.
//   - a[data-testid="graph-node"] per node (a link to its page), data-id,
//     data-state, with text.node-state (icon and label), text.node-revision
//     and text[data-testid="graph-waiting-text"] when the node waits.
//   - path[data-testid="graph-edge"] with data-type source | dependsOn.
//   - data-testid="graph-waiting": the full "waits for" sentences.
//
// Object page ("/objects/{kind}/{namespace}/{name}"):
//   - data-testid="summary"; #object-state (data-testid "object-state",
//     data-state), #object-revision, #object-reason, #object-message;
//     data-testid="suspended-info" when suspended.
//   - data-testid="actions" with buttons #action-reconcile,
//     #action-reconcile-source, #action-suspend, #action-resume; a disabled
//     one has data-denied="true" when RBAC refused it, and the reason is the
//     text of #action-{action}-why, which its aria-describedby names.
//     #action-status says what the last action did.
//   - data-testid="diff-section"; data-testid="diff" holds
//     details[data-testid="diff-item"] (data-what created | changed |
//     deleted, data-id) with pre.diff of span.line.add / .del / .hunk /
//     .ctx / .file; data-testid="diff-summary", "diff-none", "diff-error".
//   - data-testid="conditions" (tr[data-type]), data-testid="events" with
//     tr[data-testid="event-row"] (data-reason, data-type), newest first
//     and updated live; data-testid="tree" of li[data-testid="tree-node"];
//     data-testid="history".
package web
