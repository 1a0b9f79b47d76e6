// Generated from edge-authority/openapi.json by www/scripts/api-types.mjs
// (openapi-typescript); do not edit. tests/www/lib.test.mjs fails when stale.
export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description alive */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Health"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every readable namespace's figures in the Prometheus text format */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Prometheus text exposition format 0.0.4 */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/plain": string;
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List namespaces the token may read, by name */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description the previous page's nextAfter */
                    after?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description summaries */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NamespaceList"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create a namespace (again with the same configuration: 200) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CreateNamespace"];
                };
            };
            responses: {
                /** @description already exists as asked */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description created */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_exists */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Namespace summary */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description summary */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Audit entries, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description the previous page's nextBefore */
                    before?: string;
                };
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description entries */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AuditList"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Export to move it to another authority: reads the witness, freezes the namespace (audited), retires it here (its witness raised past max, so no copy of this storage can grant again) and answers its document; it stays frozen, and a second export is refused (namespace_exported) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Reason"];
                };
            };
            responses: {
                /** @description the document for POST .../import on the destination */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ExportDocument"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_exported */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/floor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Raise next to a floor */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Floor"];
                };
            };
            responses: {
                /** @description summary after */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: floor_below_next */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/freeze": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Freeze: refuse new grants */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Reason"];
                };
            };
            responses: {
                /** @description summary after */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Retained grants, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description the previous page's nextBefore */
                    before?: string;
                };
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description grants */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["GrantList"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create the namespace from an export document, with next at its start (audited; never over an existing namespace) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ExportDocument"];
                };
            };
            responses: {
                /** @description imported */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request, export_invalid, export_unsupported, export_namespace_mismatch */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: already_imported, namespace_exists */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set the limits on what callers add (audited) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["SetLimits"];
                };
            };
            responses: {
                /** @description summary after */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/lookup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The retained grant holding an ID */
        get: {
            parameters: {
                query: {
                    id: string;
                };
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description grant */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lookup"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found, grant_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/rates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Grants per minute */
        get: {
            parameters: {
                query?: {
                    window?: "1h" | "24h";
                };
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description buckets */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Rates"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/relays": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Turn relays on or off (audited). Turning them off, like a freeze, a floor or an export, is answered only once no relay can serve a range granted before it: at once when relays were never on, otherwise after each relay's lease ran out (RANGEID_RELAY_LEASE_MS) and, after the object's start, one lease */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["SetRelays"];
                };
            };
            responses: {
                /** @description summary after */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{ns}/unfreeze": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Unfreeze (refused for a namespace exported from here: namespace_exported) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    ns: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Reason"];
                };
            };
            responses: {
                /** @description summary after */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Summary"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_exported */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OpenAPI 3.1 */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": unknown;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/ranges": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Take a range */
        post: {
            parameters: {
                query?: {
                    /** @description which relay serves a generator's request when the namespace's relays are on (docs/relays.md): one relay per namespace and region; by default the continent the request arrives from. Ignored while relays are off and for a relay token's own requests, which go to the namespace object */
                    region?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["GrantRequest"];
                };
            };
            responses: {
                /** @description granted (replayed: true on a replay) */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Grant"];
                    };
                };
                /** @description error: invalid_request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_not_found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: request_conflict, namespace_exhausted */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: payload_too_large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: namespace_frozen */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: rate_limited, ledger_full */
                429: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The calling token's claims */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description claims */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Session"];
                    };
                };
                /** @description error: unauthenticated */
                401: {
                    headers: {
                        "WWW-Authenticate"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: forbidden */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: method_not_allowed */
                405: {
                    headers: {
                        Allow?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description error: unavailable */
                503: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AuditEntry: {
            /** @enum {string} */
            action: "create" | "floor" | "freeze" | "unfreeze" | "limits" | "relays" | "fence_forward" | "witness_behind" | "export" | "import";
            /** @description the token's sub; system for the authority itself */
            actor: string;
            after: Record<string, unknown> | null;
            /**
             * Format: date-time
             * @description RFC 3339 UTC
             */
            at: string;
            before: Record<string, unknown> | null;
            /** @description entry id */
            id: string;
            reason: string | null;
        };
        AuditList: {
            audit: components["schemas"]["AuditEntry"][];
            nextBefore: string | null;
        };
        CreateNamespace: {
            /** @description default 1 */
            first?: string;
            /** @description inclusive, at least first; default 2^53-1 */
            max?: string;
            /** @description default 10000000 */
            maxCount?: number;
            namespace: string;
        };
        Error: {
            error: {
                /** @enum {string} */
                code: "invalid_request" | "unauthenticated" | "forbidden" | "not_found" | "namespace_not_found" | "grant_not_found" | "method_not_allowed" | "request_conflict" | "request_owner_mismatch" | "namespace_exhausted" | "namespace_exists" | "floor_below_next" | "namespace_exported" | "export_invalid" | "export_unsupported" | "export_namespace_mismatch" | "already_imported" | "payload_too_large" | "namespace_frozen" | "rate_limited" | "ledger_full" | "unavailable";
                /** @description invalid_request for a range request's count: the namespace's maxCount; ask again for at most this */
                maxCount?: number;
                message: string;
                /** @description floor_below_next: the namespace's next */
                next?: string;
                /** @description namespace_exhausted: IDs left */
                remaining?: string;
            };
        };
        /** @description A namespace as its source handed it over (POST .../export), and what POST .../import takes, unchanged. check covers every other field; start is the highest of next, fence and witness, where the destination's first grant starts. */
        ExportDocument: {
            /** @description SHA-256 over every other field, each written as its byte length, ':', its value (decimals as digits) and a newline, in the order listed here; a setting left at its default as 'default' */
            check: string;
            /**
             * Format: date-time
             * @description RFC 3339 UTC
             */
            exportedAt: string;
            /** @description the sub of the admin token that exported (at most 512 bytes) */
            exportedBy: string;
            /** @description the fence the source had recorded */
            fence: string;
            /** @description first ID */
            first: string;
            /** @enum {string} */
            format: "rangeid-namespace-export/1" | "rangeid-namespace-export/2";
            /** @description last ID */
            max: string;
            maxCount: number;
            namespace: string;
            /** @description the source's next when it froze */
            next: string;
            /** @description the export's reason (at most 512 bytes) */
            reason: string;
            /** @description format 2 (absent in 1): the namespace's settings at the source; an import applies the limits, and relays start off */
            settings?: {
                /** @description null: the default */
                grantsPerSecond: number | null;
                /** @description null: the default */
                ledgerRows: number | null;
                /** @description whether relays were on at the source */
                relays: boolean;
                /** @description null: the default */
                subLedgerRows: number | null;
            };
            /** @description the exporting authority's origin (at most 512 bytes) */
            source: string;
            /** @description where the destination's first grant starts: the highest of next, fence and witness (at most max + 1) */
            start: string;
            /** @description the mark the source's witness held, read just before the freeze */
            witness: string;
        };
        Floor: {
            /** @description the new next; never below the current one */
            floor: string;
        };
        /** @description Clients ignore fields they do not know, so later versions may add some. */
        Grant: {
            count: number;
            /** @description exclusive end, up to 2^64 */
            end: string;
            incarnation: string;
            /** @description the namespace's largest request */
            maxCount: number;
            namespace: string;
            /** @description IDs left in the namespace after this grant (now, on a replay) */
            remaining: string;
            replayed: boolean;
            requestId: string;
            /** @description first ID of the range */
            start: string;
        };
        GrantEntry: {
            /**
             * Format: date-time
             * @description RFC 3339 UTC: when it was committed; for a grant kept in a span of several, when the span's first was (it was committed between at and span.lastAt)
             */
            at: string;
            count: number;
            /** @description exclusive end */
            end: string;
            incarnation: string;
            requestId: string;
            /** @description present when the grant is kept in a span: consecutive grants of one sub and incarnation under numbered request ids, of one count, with contiguous ranges, committed within a minute; each derived exactly */
            span?: {
                firstRequestId: string;
                grants: number;
                /**
                 * Format: date-time
                 * @description RFC 3339 UTC
                 */
                lastAt: string;
            };
            /** @description first ID */
            start: string;
            /** @description the token subject that took it (null for grants stored before owners were kept) */
            sub: string | null;
        };
        GrantList: {
            grants: components["schemas"]["GrantEntry"][];
            nextBefore: string | null;
        };
        GrantRequest: {
            /** @description at most the namespace's maxCount */
            count: number;
            incarnation: string;
            namespace: string;
            requestId: string;
        };
        Health: {
            ok: boolean;
        };
        /** @description what callers may add: each token sub at most grantsPerSecond new grants a second and subLedgerRows ledger rows; the ledger at most ledgerRows rows. Past one, a grant is refused 429 (rate_limited, ledger_full) with Retry-After */
        Limits: {
            /** @description default 5000 */
            grantsPerSecond: number;
            /** @description default 32000000 */
            ledgerRows: number;
            /** @description default 8000000; at most ledgerRows */
            subLedgerRows: number;
        };
        Lookup: {
            /**
             * Format: date-time
             * @description RFC 3339 UTC: when it was committed; for a grant kept in a span of several, when the span's first was (it was committed between at and span.lastAt)
             */
            at: string;
            count: number;
            /** @description exclusive end */
            end: string;
            /** @description the ID looked up */
            id: string;
            incarnation: string;
            namespace: string;
            /** @description present for an ID a relay handed out (docs/relays.md §6): the relay's own grant that held it. The lookup's other fields name the generator once the relay's report was kept, else they repeat the relay's grant */
            relay?: {
                /**
                 * Format: date-time
                 * @description RFC 3339 UTC: when it was committed; for a grant kept in a span of several, when the span's first was (it was committed between at and span.lastAt)
                 */
                at: string;
                count: number;
                /** @description exclusive end */
                end: string;
                incarnation: string;
                /** @description whether the relay's report of this sub-grant was kept: then the lookup names the generator, else the relay */
                reported: boolean;
                /**
                 * Format: date-time
                 * @description when the report was kept
                 */
                reportedAt?: string;
                requestId: string;
                /** @description present when the grant is kept in a span: consecutive grants of one sub and incarnation under numbered request ids, of one count, with contiguous ranges, committed within a minute; each derived exactly */
                span?: {
                    firstRequestId: string;
                    grants: number;
                    /**
                     * Format: date-time
                     * @description RFC 3339 UTC
                     */
                    lastAt: string;
                };
                /** @description first ID */
                start: string;
                /** @description the token subject that took it (null for grants stored before owners were kept) */
                sub: string | null;
            };
            requestId: string;
            /** @description present when the grant is kept in a span: consecutive grants of one sub and incarnation under numbered request ids, of one count, with contiguous ranges, committed within a minute; each derived exactly */
            span?: {
                firstRequestId: string;
                grants: number;
                /**
                 * Format: date-time
                 * @description RFC 3339 UTC
                 */
                lastAt: string;
            };
            /** @description first ID */
            start: string;
            /** @description the token subject that took it (null for grants stored before owners were kept) */
            sub: string | null;
        };
        NamespaceList: {
            namespaces: components["schemas"]["Summary"][];
            /** @description pass as after for the next page; null on the last */
            nextAfter: string | null;
        };
        Rates: {
            /** @enum {integer} */
            bucketSeconds: 60;
            /** @description minutes with grants only, oldest first */
            buckets: {
                /** @description IDs granted in the minute */
                ids: string;
                /**
                 * Format: date-time
                 * @description RFC 3339 UTC
                 */
                minute: string;
                ranges: number;
            }[];
            /**
             * Format: date-time
             * @description RFC 3339 UTC
             */
            from: string;
            namespace: string;
            /**
             * Format: date-time
             * @description RFC 3339 UTC
             */
            to: string;
            /** @enum {string} */
            window: "1h" | "24h";
        };
        Reason: {
            /** @description printable text, not only spaces */
            reason: string;
        };
        Session: {
            /** @description expiry, seconds since the epoch */
            exp: number;
            /** @description names, or ["*"] for all */
            ns: string[];
            /** @enum {string} */
            role: "generator" | "reader" | "admin" | "relay";
            sub: string;
        };
        /** @description the limits to change: a number sets one, null puts it back to the default, an absent one is kept */
        SetLimits: {
            grantsPerSecond?: number | null;
            ledgerRows?: number | null;
            subLedgerRows?: number | null;
        };
        SetRelays: {
            /** @description printable text, not only spaces */
            reason: string;
            /** @enum {string} */
            relays: "off" | "on";
        };
        Summary: {
            /**
             * Format: date-time
             * @description RFC 3339 UTC
             */
            createdAt: string;
            exhaustion: {
                at: string | null;
                seconds: number;
            } | null;
            /** @description the restore fence: no grant ends above mark, which a separate witness holds */
            fence: {
                /** @description the acknowledged mark */
                mark: string;
                /** @description times the witness was found ahead of this object's storage (the object was restored) */
                rollbacks: number;
                /** @description IDs starts skipped, in all */
                skipped: string;
                /** @description times the witness was found below this object's fence (the witness was restored or wiped) and raised back */
                witnessBehind: number;
            };
            /** @description first ID */
            first: string;
            grantRate: {
                lastHour: {
                    idsPerSecond: number;
                    ranges: number;
                };
                lastMinute: {
                    idsPerSecond: number;
                    ranges: number;
                };
            };
            /** @description IDs granted */
            idsGranted: string;
            /** Format: date-time */
            lastGrantAt: string | null;
            /** @description the grant ledger: rows (spans of grants, and relays' reported sub-grants), the object's storage in bytes (null where the runtime does not say) and the subs holding the most rows */
            ledger: {
                bytes: number | null;
                /** @description what relays reported of their sub-grants (docs/relays.md §6), the latest first; absent from authorities before reports */
                relays?: {
                    /** @description IDs the relay's instances abandoned (expired, revoked, late), and what each ended instance held at its last report (lost at its restart; an upper bound) */
                    abandoned: string;
                    /** @description sub-grants the relay's instances dropped from their full report backlogs */
                    backlogDropped: number;
                    batches: number;
                    /** @description sub-grants not kept for lack of room in the ledger's budgets (reports never fill more than three quarters of the ledger's or the generator's rows) */
                    dropped: number;
                    /** @description IDs the relay's live instances held at their latest reports */
                    held: string;
                    incarnation: string;
                    /** @description the relay's instances that reported within the retention (each restart, eviction or deploy starts one) */
                    instances: number;
                    kept: number;
                    /**
                     * Format: date-time
                     * @description RFC 3339 UTC
                     */
                    lastAt: string;
                    /** @description of those, the latest to report and any that reported within a relay lease (2 or more at once: a split) */
                    live: number;
                    /** @description generators' requests the relay's instances refused, by code (not in the namespace's refusals, which count the namespace object's own) */
                    refused: {
                        conflict: number;
                        exhausted: number;
                        frozen: number;
                    };
                    /** @description relay@REGION */
                    sub: string;
                    /** @description sub-grants the relay's instances handed out, by their latest reports */
                    subGrants: number;
                    /** @description sub-grants reported that lay in none of the relay's retained grants (their grant pruned first, or a wrong report): not kept */
                    unmatched: number;
                }[];
                rows: number;
                topSubs: {
                    rows: number;
                    sub: string | null;
                }[];
            };
            limits: components["schemas"]["Limits"];
            /** @description last ID */
            max: string;
            maxCount: number;
            namespace: string;
            /** @description next grant's start */
            next: string;
            rangesGranted: number;
            /** @description grant requests this namespace refused, by kind, since its creation (counted in memory, stored with the summary within seconds) */
            refusals: {
                conflict: number;
                exhausted: number;
                fenced: number;
                frozen: number;
                ledgerFull: number;
                rateLimited: number;
            };
            /**
             * @description whether relays may take ranges for this namespace's generators (off by default; docs/relays.md)
             * @enum {string}
             */
            relays: "off" | "on";
            /** @description IDs left */
            remaining: string;
            /** @enum {string} */
            state: "active" | "frozen";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
