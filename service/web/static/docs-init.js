// Swagger UI on the service's own document, its templated operations (one per endpoint, the
// variant a parameter; /openapi.json adds one path per variant with its narrowed schemas);
// no validator badge (it would call another host). No deep links: Swagger UI draws each
// operation's path as a link inside the operation's button, a control inside a control that
// keyboards and screen readers cannot use (axe-core: nested-interactive). No syntax colours:
// their red and green fall below 4.5:1 on the code blocks' dark background.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/docs/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: false,
    validatorUrl: null,
    tryItOutEnabled: true,
    syntaxHighlight: { activated: false },
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});

// What Swagger UI leaves unnamed or out of the keyboard's reach, mended as it draws: code
// blocks that scroll take the focus (scrollable-region-focusable), a request body's text
// area, a parameter's field and the choice of a body's example (one per variant) are named
// (label, select-name).
function mendAccessibility() {
  document.querySelectorAll(".swagger-ui pre:not([tabindex])").forEach(function (pre) {
    pre.setAttribute("tabindex", "0");
  });
  document.querySelectorAll(".swagger-ui textarea:not([aria-label])").forEach(function (area) {
    area.setAttribute("aria-label", area.closest(".opblock-section-request-body")
      ? "Request body" : "Value");
  });
  document.querySelectorAll(".swagger-ui tr[data-param-name] select:not([aria-label]), "
      + ".swagger-ui tr[data-param-name] input:not([aria-label])").forEach(function (field) {
    field.setAttribute("aria-label", field.closest("tr").getAttribute("data-param-name"));
  });
  document.querySelectorAll(".swagger-ui select.examples-select-element:not([aria-label])")
    .forEach(function (select) { select.setAttribute("aria-label", "Example"); });
}

new MutationObserver(mendAccessibility).observe(document.body,
                                                { childList: true, subtree: true });
