interface ImportMetaEnv {
  readonly VITE_RANGEID_URL?: string
  readonly VITE_RANGEID_TOKEN?: string
  readonly VITE_RANGEID_NAMESPACE?: string
}
