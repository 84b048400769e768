"""The public contract's marshmallow schemas: every constraint a request must meet, every
field of an answer, declared once. `common` holds the fields and mixins every resource
shares (dice, box ids, scorecards, options, house rules); each other module is one
resource's requests and answers."""
