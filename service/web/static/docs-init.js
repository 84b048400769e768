// Swagger UI on the service's own document, its templated operations (one per endpoint, the
// variant a parameter; /openapi.json adds one path per variant with its narrowed schemas);
// no validator badge (it would call another host).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/docs/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
