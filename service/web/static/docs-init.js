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

// A templated operation's body examples are one per variant, each named by the variant's id
// (the spec's requestBody examples): the example follows the variant chosen, or the body
// sent would be another variant's (its boxes a 409 here). It is picked as a user picks it,
// a change event on the example select, so Swagger UI writes that example into the body.
// A body the user has edited ([Modified value]) is theirs, and a variant without an example
// keeps what it has: both left alone.
function exampleFollowsVariant(operation) {
  var field = operation.querySelector('tr[data-param-name="variant"] select, '
                                      + 'tr[data-param-name="variant"] input');
  var select = operation.querySelector(
    ".opblock-section-request-body select.examples-select-element");
  if (!field || !select || select.value === field.value
      || select.value === "__MODIFIED__VALUE__") return;
  var known = Array.prototype.some.call(select.options, function (option) {
    return option.value === field.value;
  });
  if (!known) return;
  select.value = field.value;
  select.dispatchEvent(new Event("change", { bubbles: true }));
}

document.addEventListener("change", function (event) {
  var operation = event.target.closest
    && event.target.closest('.swagger-ui tr[data-param-name="variant"]')
    && event.target.closest(".opblock");
  if (operation) exampleFollowsVariant(operation);
});

// An operation opened again draws its body with the first example, its variant as chosen
// before: the example is made to follow once the body's select is drawn (marked, so that
// the user's own later choice of an example is not overruled).
new MutationObserver(function () {
  document.querySelectorAll(".swagger-ui .opblock-section-request-body "
                            + "select.examples-select-element:not([data-follows-variant])")
    .forEach(function (select) {
      select.setAttribute("data-follows-variant", "");
      var operation = select.closest(".opblock");
      if (operation) exampleFollowsVariant(operation);
    });
}).observe(document.body, { childList: true, subtree: true });
