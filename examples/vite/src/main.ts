import './style.css'
import { RangeIdError } from 'rangeid'
import { generator, takeIds } from './rangeid.ts'

const title = 'IDs taken in this browser'

const app = document.querySelector<HTMLDivElement>('#app')!
app.innerHTML = `
  <h1>${title}</h1>
  <p><span id="status">Taking IDs…</span> <button id="more" type="button">Take 100 more</button></p>
  <ol id="ids"></ol>
`

async function take(): Promise<void> {
  const status = app.querySelector<HTMLSpanElement>('#status')!
  const list = app.querySelector<HTMLOListElement>('#ids')!
  try {
    const ids = await takeIds(100)
    const { incarnation } = await generator
    list.replaceChildren(...ids.map((id) => Object.assign(document.createElement('li'), { textContent: id })))
    list.dataset.incarnation = incarnation
    status.textContent = `${ids.length} IDs from generator ${incarnation}`
  } catch (e) {
    status.textContent = e instanceof RangeIdError ? `${e.code}: ${e.message}` : String(e)
    status.setAttribute('role', 'alert')
  }
}

app.querySelector<HTMLButtonElement>('#more')!.addEventListener('click', take)
void take()

// This module takes its own hot updates: an edit re-renders the page in
// place, and the generator in ./rangeid.ts carries on.
import.meta.hot?.accept()
