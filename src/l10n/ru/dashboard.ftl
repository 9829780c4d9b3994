## The key registry (src/ui/keys.rs): help sections, descriptions, footer hints.
hint-quit = выход
hint-help = справка
hint-filter = фильтр
hint-command = команда
hint-view = вид
hint-details = детали
hint-yaml = yaml
hint-sort = сортировка
hint-apply = применить
hint-cancel = отмена
hint-mode = режим
hint-log = журнал
hint-confirm = подтвердить
hint-channel = канал
keys-section-engine = Движок (встроенный: cvo demo, cvo tui)
keys-section-general = Общие
keys-section-views = Виды
keys-section-navigation = Перемещение
keys-section-prompt = Строка ввода
keys-section-updates = Обновления
keys-section-confirm-popups = Окна подтверждения
keys-quit-from-anywhere = выход, откуда угодно
keys-quit-closes-a-popup-first = выход (сначала закрывает окно)
keys-toggle-this-help = показать / скрыть эту справку
keys-filter-the-table-text-inverts = фильтр таблицы (!текст — наоборот; см. Фильтр)
keys-command-co-cv-nodes-history = команда: :co :cv :nodes :history :health :updates :q
keys-back-close-popup-clear-filter = назад: закрыть окно, сбросить фильтр
keys-next-view = следующий вид
keys-previous-view = предыдущий вид
keys-overview-operators-nodes-history-health = обзор, операторы, узлы, история, здоровье, обновления
keys-details-of-the-row-updates = подробности строки (Обновления: запросить, с подтверждением)
keys-yaml-of-the-selected-object = YAML выбранного объекта
keys-sort-by-severity-problems-first = сортировка по важности (сначала проблемы) / порядок API
keys-next-row-scroll-down = следующая строка / прокрутка вниз
keys-previous-row-scroll-up = предыдущая строка / прокрутка вверх
keys-first-row-top = первая строка / в начало
keys-last-row-bottom = последняя строка / в конец
keys-page-down = страница вниз
keys-page-up = страница вверх
keys-apply-filter-run-command = применить фильтр / выполнить команду
keys-cancel-clears-the-filter = отмена (сбрасывает фильтр)
keys-delete-a-character = удалить символ
keys-change-the-channel-from-those = сменить канал обновлений на один из перечисленных в релизе (с подтверждением)
keys-clear-the-requested-update-asks = отменить запрошенное обновление (с подтверждением)
keys-accept-the-selected-update-s = принять риски выбранного обновления (Обновления; с подтверждением)
keys-confirm-switch-the-mode-write = подтвердить: сменить режим, записать запрос
keys-cancel-nothing-is-sent-or = отмена: ничего не отправляется и не записывается
keys-task-graph-run-levels-components = граф задач (уровни запуска × компоненты), дрейф
keys-switch-watch-only-active-apply = переключить watch-only ↔ active-apply (с подтверждением)
keys-reconcile-now-ask-the-engine = синхронизировать сейчас: запросить у движка проход применения
keys-show-hide-the-engine-event = показать / скрыть журнал событий движка
keys-filter-help = Текст сопоставляется с тем, что показывает строка (имя, версия, слово состояния, причина), и с её полным сообщением, без учёта регистра; ведущий ! оставляет строки, которые не совпадают. На виде Операторы слово состояния, набранное отдельно (OK, PROG, PEND, DEGR, UNAV, NOUP, UNKN), сопоставляется со столбцом СТАТУС точно: /!OK показывает все операторы не в состоянии OK, даже если их сообщение содержит «ok».
cmd-quit = выход
cmd-overview = обзор: ClusterVersion, завершённость, условия
cmd-operators = кластерные операторы (ClusterOperators)
cmd-nodes = пулы машин и узлы
cmd-history = история обновлений
cmd-health = наблюдения о здоровье обновления
cmd-updates = цели обновления, канал и запросы
cmd-help = эта справка
## Popups (src/ui/popup.rs): help headings, the confirmations, the request review.
help-filtering = Фильтр (/)
help-status-words = Слова состояния операторов (цвет никогда не единственный признак)
help-commands = Команды (после :)
confirm-switch-from = Переключить движок из режима{" "}
confirm-switch-to = {" "}в режим{" "}
confirm-lease = Lease { $lease }: { $words }
confirm-switch-refused = Переключение отклонено: { $why }
confirm-close-unsent = {" "}закрыть (ничего не отправляется)
confirm-switch-key = {" "}переключить{"   "}
confirm-cancel-unsent = {" "}отмена (ничего не отправляется)
channels-listed = Каналы обновлений, перечисленные в текущем релизе:
channels-choose = {" "}выбрать{"   "}
channels-review = {" "}проверить изменение{"   "}
channels-cancel = {" "}отмена
request-label = Запрос{"  "}
request-writes-nothing = Ничего не записывается.
request-writes = Записывается (JSON merge patch в clusterversion/version):
request-preconditions = Предусловия
request-risks = Риски, которые вы принимаете, подтверждая
request-warning = предупреждение: { $w }
request-refused = Отклонено: { $why }
request-close = {" "}закрыть (ничего не записывается)
request-write-it = {" "}записать{"   "}
request-cancel = {" "}отмена (ничего не записывается)
popup-cluster-label = Кластер{"  "}
## Views (src/ui/tab.rs)
tab-overview = Обзор
tab-operators = Операторы
tab-nodes = Узлы
tab-history = История
tab-health = Здоровье
tab-updates = Обновления
tab-tasks = Задачи
tab-drift = Дрейф
## Header (src/ui/view/header.rs)
header-feed-as-of = { $feed } на { $at }
mode-watch-only = watch-only
header-version = Версия{" "}
header-version-unknown = неизвестна (данных ещё нет)
header-no-completed = нет завершённого обновления
header-target = {"  "}Цель{" "}
header-channel = {"  "}Канал{" "}
header-no-data = Операторы, узлы и наблюдения: неизвестны, пока не ответит API-сервер
header-operators = Операторы{" "}
header-insights = {" "}· Замечания{" "}
header-insight-errors = { $count } ({ $errors } { $errors ->
        [one] ошибка
        [few] ошибки
       *[many] ошибок
    })
header-sim-clock = {" "}│{" "}модельное время ×{ $s }
header-engine = Движок{" "}
header-lease = {"  "}Lease{" "}
header-lease-ours = удерживаем мы
header-we-lead = { $holder } (мы лидер)
header-us = мы
header-not-us = { $h } (не мы)
header-lease-none = нет
header-pulling = {"  "}Загрузка{" "}
header-error = {"  "}Ошибка{" "}
header-last-command = {"  "}Последняя команда{" "}
header-command-ok = { $command }: выполнено
header-command-refused = { $command } отклонена: { $why }
## Table column headers (src/ui/view); condition and kind columns stay Latin.
col-action = ОПЕР.
col-assessment = ОЦЕНКА
col-avail = AVAIL
col-completed = ЗАВЕРШЕНО
col-completion = ЗАВЕРШЕНИЕ
col-degr = DEGR
col-duration = ДЛИТ.
col-est = ОСТ.
col-image = ОБРАЗ
col-impact = ВЛИЯНИЕ
col-kind = KIND
col-level = УРОВЕНЬ
col-message = СООБЩЕНИЕ
col-name = ИМЯ
col-object = ОБЪЕКТ
col-phase = ФАЗА
col-pool = ПУЛ
col-prog = PROG
col-reason = ПРИЧИНА
col-recommended = РЕКОМЕНДОВАНО
col-risks = РИСКИ
col-since = ПРОШЛО
col-started = НАЧАЛО
col-state = СОСТОЯНИЕ
col-status = СТАТУС
col-type = ТИП
col-upgr = UPGR
col-verified = ПРОВЕРЕНО
col-version = ВЕРСИЯ
## Tables (src/ui/view/table.rs)
## Tables (src/ui/view/table.rs), continued
table-no-match = ни одна строка не подходит под фильтр «{ $filter }» (Esc сбрасывает его)
table-by-severity = {" "}↓важность
## Overview (src/ui/view/overview.rs)
overview-hidden-pools = пулы машин
overview-hidden-health = здоровье
overview-more-below = ниже ещё: { $hidden } — увеличьте окно или нажмите { $keys }
overview-conditions-title = условия clusterversion
overview-no-conditions = у ClusterVersion нет условий
overview-pools-note = {" "}([3] узлы)
overview-control-plane = {" "}управляющий слой{" "}
overview-operators-updated = обновлено { $updated } из { $total } операторов ({ $percent })
overview-updating = {" "}·{" "}{ $n } обновляется
overview-waiting = {" "}·{" "}{ $n } { $n ->
    [one] ожидает
    [few] ожидают
   *[many] ожидают
}
overview-duration = Длительность{" "}
overview-estimate = Осталось примерно{" "}
overview-no-update = Обновление не выполняется: кластер работает на версии { $v }.
overview-no-update-no-history = Обновление не выполняется, и в истории обновлений нет завершённого обновления.
## Operators (src/ui/view/operators.rs)
operators-title = clusteroperators
operators-none = нет ClusterOperator
## Nodes and pools (src/ui/view/nodes.rs)
nodes-title = nodes
nodes-none = нет узлов
pools-none = нет MachineConfigPool
## History (src/ui/view/history.rs)
history-in-progress = выполняется
history-title = история обновлений
history-none = истории обновлений нет (ClusterVersion её не сообщает)
## Health (src/ui/view/health.rs)
health-title = здоровье обновления
health-title-short = {" "}здоровье обновления[{ $n }] ([5] подробно){" "}
health-none = нет наблюдений о здоровье обновления: ничего не требует внимания
## Drift (src/ui/view/drift.rs)
col-changes-path = ИЗМЕНЕНИЯ (путь: было → стало)
## Task graph (src/ui/view/tasks.rs)
tasks-title = граф задач
tasks-preview-failed = {" "}↳{" "}{ $marker } { $failed } (Enter: все задачи){" "}
tasks-preview = {" "}↳{" "}{ $component } · { $state } · выполнено { $done }/{ $total } (Enter: задачи){" "}
tasks-none = задач пока нет: движок ещё не загрузил полезную нагрузку релиза
tasks-no-match = ни одна ячейка не подходит под фильтр «{ $filter }» (Esc сбрасывает его)
## Sync panel (src/ui/view/sync.rs)
sync-title = {" "}синхронизация (движок){" "}
sync-at-level = {" "}·{" "}уровень запуска { $level }{ $failed }
sync-level-waiting = {" "}·{" "}ожидают: { $n }
sync-level-failed = {" "}·{" "}с ошибкой: { $n }
sync-all-levels-done = {" "}·{" "}все уровни запуска пройдены
sync-payload-unavailable = полезная нагрузка релиза недоступна: { $why }
sync-reading-payload = watch-only · чтение полезной нагрузки релиза
sync-watch-in-sync = watch-only · совпадают { $n } из { $m } манифестов{ $drift }
sync-first-comparison = {" "}(идёт первое сравнение)
sync-not-applied-yet = {" "}·{" "}ещё не применено: { $d }
sync-would-change = {" "}·{" "}изменилось бы: { $d }
sync-applied = применено { $done } из { $total } манифестов ({ $percent }){ $level }
sync-desired = Желаемая{" "}
sync-pass = {"  "}Проход{" "}
sync-running = {" "}(идёт)
sync-retry = повтор { $n }
sync-waiting = {"  "}Ожидание{" "}
sync-failing = {"  "}Сбой{" "}
sync-cluster = Кластер
sync-no-cvo = запрошено обновление до { $target }, но Lease не держит ни один оператор версии кластера
sync-cluster-cvo = Оператор версии кластера
sync-cvo-updating = обновление до { $target }
sync-cvo-operators = {" "}·{" "}операторов: { $updated } из { $total }
sync-cvo-history = {" "}·{" "}история: { $state } уже { $age }
sync-settled = все { $total } манифестов применены · сверка
sync-settled-detail = {"  "}применена; проверяется заново каждый интервал ресинхронизации
## Event log pane (src/ui/view/log.rs)
log-title = {" "}события движка[{ $n }] (e скрывает){" "}
log-none = событий движка пока нет
## Terminal too small (src/ui/view/mod.rs)
view-too-small = терминал слишком мал: { $w }x{ $h } (нужно { $min_w }x{ $min_h })
view-too-small-short = мал: { $w }x{ $h }<{ $min_w }x{ $min_h }
## Updates view (src/ui/view/updates.rs)
updates-service-title = {" "}служба обновлений{" "}
updates-channel-none = не задан
updates-release-lists = {"  "}(в релизе:{" "}{ $channels })
updates-updating-from = { $current } (обновление с { $from }){"   "}
updates-label-release = Релиз
updates-channel = Канал{" "}
updates-not-reported = не сообщается
updates-retrieved = { $status } ({ $reason }) уже { $age }
updates-upstream-instead = { $url } (вместо spec.upstream { $upstream })
updates-default-service = служба обновлений по умолчанию
updates-label-retrieved = Получено
updates-from = {"   "}из{" "}
updates-nothing-requested = ничего сверх текущего релиза
updates-label-requested = Запрошено
updates-accepted-risks = {"   "}принятые риски{" "}
updates-title = доступные обновления
updates-none = обновления не предлагаются
updates-none-why = обновления не предлагаются: причина выше
updates-key-accept = {" "}·{" "}a принять риски
updates-key-accept-gated = {" "}·{" "}a: нужен feature gate ClusterUpdateAcceptRisks
updates-keys = {" "}{ $version } — Enter запросить{ $accept } · c канал · x сбросить{" "}
updates-keys-none = {" "}c канал · x сбросить запрос{" "}
updates-no-target = Цель не выбрана.
updates-recommended-no-risk = Рекомендовано: служба обновлений не указывает рисков для этого обновления.
updates-release-notes = Примечания к релизу{" "}
updates-risk = Риск{" "}
updates-risk-accepted = {"  "}(принят)
## Engine views (src/ui/engine.rs): task states, drift, engine state, Lease, modes
cell-done = выполнена
cell-running = выполняется
cell-pending = в очереди
cell-skipped = пропущена
cell-waiting = ожидает
cell-failed = сбой
drift-created = создан (отсутствовал)
drift-would-create = отсутствует: был бы создан
drift-deleted = удалён
drift-would-delete = был бы удалён
drift-title-would = дрейф (watch-only: было бы изменено)
drift-title-changed = дрейф (active-apply: возвращено)
drift-title-update = изменения обновления до { $v } (его собственные, не дрейф)
drift-empty-update = изменений нет: последний проход обновления нашёл все объекты такими, как в релизе
drift-empty = дрейфа нет: последний проход нашёл кластер таким, как в полезной нагрузке релиза
engine-state-starting = Запуск
engine-state-waitingforlease = Ожидание Lease
engine-state-initializing = Инициализация
engine-state-updating = Обновление
engine-state-reconciling = Сверка
engine-state-stopped = Остановлен
engine-state-blocked = Заблокирован: { $why }
engine-comparing = Сравнение
engine-watching = Наблюдение
lease-unreadable = не читается: { $why }
lease-wall-clock = {" "}по настенным часам
lease-renewed = продлён { $at }{ $tag }
lease-never-renewed = ни разу не продлён
lease-not-read = ещё не прочитан
lease-ours = у нас ({ $h })
lease-held-alive = у { $h } (жив, { $renewed })
lease-held-expired = у { $h } (истёк{ $at })
lease-free = свободен
switch-to-active = cvo будет применять полезную нагрузку релиза и записывать статус ClusterVersion как оператор версии кластера этого кластера. Он берёт Lease openshift-cluster-version/version, только когда нет другого живого держателя, и без него никогда ничего не записывает.
switch-to-watch = cvo сразу прекращает запись и освобождает Lease; виды вместо этого показывают, что оператор версии кластера изменил бы (дрейф).
## View model (src/ui/model/mod.rs): feed, status words, headline
completion-estimate-unknown = неизвестно
feed-static = статический снимок
feed-unreachable-since = API недоступен с { $since }
feed-live-syncing = в реальном времени, синхронизация…
feed-live = в реальном времени
status-word-ok = доступен, не деградирован, на целевой версии
status-word-prog = выполняет обновление (Progressing=True)
status-word-pend = ещё не на целевой версии и не обновляется: ожидает
status-word-degr = деградирован (Degraded=True), но доступен
status-word-unav = недоступен (Available=False или условия нет)
status-word-noup = Upgradeable=False: блокирует следующее минорное обновление
status-word-unkn = условий нет или они Unknown
operator-waiting-to-update = ожидает обновления до { $v }
health-healthy = исправны: { $n }
health-unavailable = , недоступны: { $n }
health-degraded = , деградированы: { $n }
headline-operators-updated = обновлено { $percent } операторов
headline-assessed = Оценка { $assessment } · управляющий слой { $percent }
headline-unreachable = Недоступен
headline-unreachable-detail = ClusterVersion ещё не получен: API-сервер недоступен
headline-syncing = Синхронизация
headline-syncing-detail = ожидание первого списка ClusterVersion, ClusterOperators, пулов машин и узлов
headline-no-cv = Нет ClusterVersion
headline-no-cv-detail = в этом кластере нет clusterversion/version (не OpenShift?)
headline-cluster = Кластер
headline-update = Обновление
headline-up-to-date = Актуален
headline-not-upgradeable = обновление невозможно: { $why }
headline-blocked = Заблокировано
headline-pool-paused = {" "}на паузе
headline-workers-pending = управляющий слой Completed (обновлён до { $target }); рабочие пулы машин не завершены: { $pools }
headline-assessment = Оценка
headline-update-to = обновление до { $target }
## History VERIFIED words (src/ui/model/rows.rs)
verified-yes = да
verified-yes-detail = да: подпись релиза была проверена, когда релиз был принят
verified-local = нет (локальный)
verified-local-detail = нет: релиз, зарегистрированный в этом cvo (его собственный релиз, локальный каталог полезной нагрузки или встроенные релизы демо), у которого нет подписи для проверки; принят как зарегистрированный, никакая проверка не была пропущена
verified-no = нет
verified-no-detail = нет: подпись релиза не проверялась, когда он был принят (обычно для релиза, с которым кластер был установлен; иначе обновление было принудительно проведено мимо неудачной проверки, о чём говорят его принятые риски, или оператор версии кластера не проверяет подписи)
## API feed messages (src/ui/model/feed.rs)
feed-error-line = API недоступен с { $since } ({ $age } назад): { $error }
feed-waiting-long-error = API-сервер недоступен с { $since } ({ $age } назад): об этом кластере пока ничего не известно (данные не получены). Ошибка: { $error }
feed-waiting-long = Данных пока нет: ожидание от API-сервера первого списка ClusterVersion, ClusterOperators, пулов машин и узлов.
feed-waiting-short-error = данных нет: API-сервер недоступен (с { $since }, { $age } назад)
feed-waiting-short = данных пока нет: ожидание API-сервера (синхронизация…)
## Detail popups (src/ui/model/detail.rs)
detail-accepted-risks = Принятые риски
detail-action = Действие
detail-assessment = Оценка
detail-completed = Завершено
detail-component = Компонент
detail-description = Описание
detail-duration = Длительность
detail-estimate = Оценка времени
detail-head-all-tasks = Все задачи
detail-head-conditions = Условия
detail-head-field-changes-path-old-new = Изменения полей (путь: было → стало)
detail-head-machine-config-annotations = Аннотации machine config
detail-head-related-objects = Связанные объекты
detail-head-versions = Версии
detail-image = Образ
detail-impact = Влияние
detail-kind = Kind
detail-level = Уровень
detail-made-by = Сделано
detail-message = Сообщение
detail-name = Имя
detail-object = Объект
detail-phase = Фаза
detail-pool = Пул машин
detail-reason = Причина
detail-reference = Ссылка
detail-resources = Ресурсы
detail-run-level = Уровень запуска
detail-since = С момента
detail-started = Начато
detail-state = Состояние
detail-status = Статус
detail-task = Задача
detail-tasks = Задачи
detail-type = Тип
detail-verified = Проверено
detail-version = Версия
detail-title-condition = условие clusterversion { $condition }
detail-since-at = с { $at }
detail-title-history = история обновлений
detail-no-version = (нет версии)
detail-title-insight = наблюдение о здоровье обновления
detail-task-counts = выполнено { $done }/{ $total }, сбоев { $failed }, пропущено { $skipped }, выполняется { $running }
detail-head-waiting-on = Ожидание (ClusterOperators ещё обновляются; это не сбой)
detail-head-failed-tasks = Задачи со сбоем
detail-title-cell = уровень запуска { $level } · { $component }
detail-made-by-update = обновление до { $v }: собственное изменение релиза, не дрейф
detail-drift = дрейф
detail-at-ago = { $at } ({ $age } назад)
## Detail popups, continued
detail-to-create-yaml = { $kind } { $object } к созданию (yaml)
## Updates model (src/ui/model/updates.rs)
update-kind-recommended = рекоменд.
update-kind-conditional = условное
recommended-yes = да
recommended-no = нет
recommended-unknown = неизвестно
updates-note-no-cv = нет ClusterVersion: обновлять нечего
updates-current-release = текущий релиз
updates-note-no-channel = Канал обновлений не задан (spec.channel), поэтому служба обновлений не опрашивается: выберите канал клавишей c.
updates-note-not-listed = { $cur } не входит в канал { $channel }: релиз перечисляет { $listed }; выберите один из них клавишей c.
updates-note-retrieved-false = RetrievedUpdates=False ({ $reason }) уже { $age }: { $msg }
updates-note-last-good = Цели ниже — последний успешный ответ { $url }, { $age } назад ({ $at }).
updates-note-last-good-unknown = Цели ниже — из последнего успешного получения, более { $age } назад.
updates-note-none-newer = Обновлений нет: { $url } не перечисляет релизов новее { $cur } в канале { $channel }.
updates-note-no-edge = Обновлений нет: { $service } не перечисляет переходов с { $cur } в канале { $channel } (получено успешно, условие не менялось { $age }). Более новые релизы могут существовать, но пути к ним отсюда ещё нет.
updates-note-retrieved-unknown = RetrievedUpdates=Unknown ({ $reason }): { $msg }
updates-note-no-condition = Обновлений нет: у ClusterVersion ещё нет условия RetrievedUpdates (ни один оператор версии кластера не опрашивал службу обновлений).
updates-summary-no-cv = Обновления: нет ClusterVersion
updates-summary-recommended = { $versions } рекомендовано
updates-summary-conditional = { $version } условно (риск: { $risks })
updates-summary-none-offered = не предлагаются
updates-summary-none = Обновления (6): нет. { $why }
updates-summary = Обновления (6): { $parts }
updates-summary-requested = {" "}·{" "}запрошено { $what }
not-offered-via = нет перехода с { $cur }; сначала обновитесь до { $v }
not-offered-no-edge = нет перехода с { $cur }
not-offered-unusable = его условный переход непригоден
not-offered-risk-applies = применим
not-offered-risk-not-evaluated = не оценён
not-offered-risk-not-yet = ещё не оценён
not-offered-risk = риск { $names } { $state }; см. таблицу
not-offered-more = , и ещё { $more } старше
not-offered = Не предлагаются с { $cur } в канале { $channel } ({ $upstream }): { $words }{ $tail }.
## Request popups (src/ui/request.rs)
request-title-conditional = запросить условное обновление до { $version }?
request-title-update = запросить обновление до { $version }?
request-title-clear = отменить запрошенное обновление?
request-title-channel = сменить канал обновлений на { $c }?
request-title-accept = принять эти риски?
request-no-cv = нет ClusterVersion, в который можно записать
request-not-recommended = служба обновлений не рекомендует { $target }; его риски перечислены ниже
request-nothing-to-write = записывать нечего ({ $why })
## Requests from the dashboard (src/ui/app/requests.rs)
requests-read-only = --read-only: эта панель отказывается от любой записи; ничего не отправляется.
requests-snapshot = в снимок (--from) нельзя записать; ничего не отправляется.
requests-no-writer = у этой панели нет средства записи в кластер; используйте `cvo upgrade`.
requests-gate-off = для принятия рисков нужен feature gate { $gate }, который FeatureGate «cluster» не включает для { $current }; Enter запрашивает условное обновление с отказом от проверки его рисков
requests-gate-unknown = для принятия рисков нужен feature gate { $gate }, а FeatureGate «cluster» ещё не прочитан ни одним движком; Enter запрашивает условное обновление с отказом от проверки его рисков
requests-none-selected = обновление не выбрано: запрашивать нечего
requests-select-conditional = сначала выберите условное обновление на виде Обновления ([6])
requests-no-channels = текущий релиз не перечисляет каналов обновлений (status.desired.channels)
requests-channel-title = смена канала обновлений
requests-refused = отклонено, ничего не записано: { $why }
requests-failed = ничего не записано: { $e }
requests-nothing = записывать нечего
## Engine keys (src/ui/app/engine_keys.rs)
switch-title = переключиться в режим { $mode }?
switch-refused = режим не переключён: { $why }
engine-key-snapshot = у снимка (--from) нет движка
engine-key-no-engine = эта панель работает без движка (--no-engine, или он не смог запуститься: причина в журнале)
## The app: flashes and command line (src/ui/app.rs)
app-no-engine = нет движка, которому можно отправить команды
app-sent = отправлено { $text }; результат появится в заголовке
app-sent-waiting = отправлено { $text }; ожидание API-сервера
app-engine-busy = движок занят: { $text } не отправлено, повторите
app-engine-stopped = движок остановлен: { $text } не отправлено
app-help-title = справка
app-unknown-command = неизвестная команда «:{ $cmd }»; попробуйте :help
app-no-yaml = здесь нет объекта, который можно показать в YAML
## Dashboard start (src/ui/mod.rs)
ui-needs-terminal = панели нужен терминал (stdin/stdout не TTY); для текстового вывода используйте `cvo status` или `cvo demo --headless`
## Popup borders (src/ui/view/popup.rs)
popup-hint-detail = {" "}j/k прокрутка · y yaml · Esc закрыть{" "}
popup-hint-close = {" "}n закрыть{" "}
popup-hint-confirm = {" "}y подтвердить · n отмена{" "}
popup-hint-request-refused = {" "}j/k прокрутка · n закрыть{" "}
popup-hint-request = {" "}y подтвердить · n отмена · j/k прокрутка{" "}
popup-hint-channels = {" "}j/k выбор · Enter проверить · Esc отмена{" "}
popup-hint-scroll = {" "}j/k прокрутка · Esc закрыть{" "}
## cvo demo --headless (src/cli/demo.rs): its own progress lines (the level tags stay)
demo-start = демо: кластер на версии { $from }, скорость { $speed } (время по модельным часам), полезные нагрузки релизов в { $dir }
demo-run-level = , уровень запуска { $l }
demo-progress = ход
demo-completed = обновление до { $target } Completed
demo-failing = обновление не проходит: { $r }
demo-releases-registry = релизы из реестра { $registry } ({ $repo } { $tags }; загружены и подписаны демо-ключом за { $took } с, ключ создан за { $keygen } мс)
demo-releases-embedded = релизы, встроенные в cvo (реестр не запрошен)
demo-releases-embedded-because = релизы, встроенные в cvo ({ $why })
demo-registry-timeout = нет ответа за { $ms } мс
demo-registry-refused = соединение отклонено
demo-registry-none = реестр не отвечает по адресу { $url }: { $why }
demo-registry-credentials = { $url } требует учётные данные; демо загружает образы без них
demo-registry-not-one = { $url } ответил { $status }: это не реестр
demo-line = демо: { $line }
demo-source-registry = реестр { $registry }
demo-source-embedded = встроенные релизы
demo-requesting-update = запрос обновления до { $v } (как `oc adm upgrade --to { $v }`)
demo-engine-stopped = движок остановился
demo-interrupted = прервано
demo-timeout = время ожидания истекло через { $secs } с: выполнено { $done }/{ $total }, состояние { $state }
## Usage errors of the commands (src/cli/run.rs)
usage-watch-from = -w: файлы --from не меняются; для наблюдения нужен кластер
usage-speed = --speed { $s }: должно быть положительным числом
usage-until-complete = --until-complete требует --headless
usage-image-or-payload = укажите одно из: --to-image PULLSPEC или --payload DIR
## Connection flags (src/cli/source.rs)
usage-now = --now { $s }: не время в формате RFC 3339 ({ $e })
## cvo status (src/cli/status.rs): Russian only with --lang ru; assessments, phases, levels, impacts and column names stay as oc prints them
status-not-updating = Кластер не обновляется.
status-completed = Обновление до { $target } успешно завершено в { $at } (длительность: { $duration })
status-assessment = Оценка:              { $v }
status-target-version = Целевая версия:      { $v }
status-updating = Обновляются:         { $v }
status-completion = Завершённость:       { $percent }% (операторов обновлено: { $updated }, обновляются: { $updating }, ожидают: { $waiting })
status-duration-eta = Длительность:        { $duration } (осталось примерно: { $eta })
status-duration = Длительность:        { $duration }
status-operator-health = Здоровье операторов: исправны: { $n }
status-unavailable = , недоступны: { $n }
status-degraded = , доступны, но деградированы: { $n }
## cvo status, headings
status-update-health = = Здоровье обновления =
status-worker-upgrade = = Обновление рабочих узлов =
status-control-plane = = Управляющий слой =
status-updating-operators = Обновляющиеся кластерные операторы
status-cp-nodes-done = Все узлы управляющего слоя успешно обновлены до { $v }
status-cp-nodes = Узлы управляющего слоя
status-worker-nodes = Узлы рабочего пула { $pool }
status-run-details = Запустите с --details=health, чтобы увидеть подробное описание и ссылки на документацию
## cvo upgrade (src/cli/upgrade/mod.rs): Russian only with --lang ru; conditions, reasons and messages stay
upgrade-available-channels = {" "}(доступные каналы:{" "}{ $channels })
upgrade-channel = Канал обновлений: { $c }
upgrade-channel-unset = Канал обновлений не задан
upgrade-in-progress = info: выполняется обновление. { $message }
upgrade-upstream-unset = Служба обновлений (upstream) не задана, поэтому кластер использует подходящую по умолчанию.
upgrade-upstream = Служба обновлений (upstream): { $url }
upgrade-recommended = Рекомендуемые обновления:
upgrade-none = Доступных обновлений нет. Можно обновиться до конкретного образа релиза с --to-image или дождаться новых обновлений.
upgrade-known-issues = Обновления с известными проблемами:
upgrade-no-not-recommended = Обновлений, не рекомендуемых для конфигурации вашего кластера, нет.
upgrade-more-not-recommended = Доступны и другие обновления, не рекомендуемые{ $qualifier } для конфигурации вашего кластера; чтобы увидеть их, повторите команду с --include-not-recommended.

## Fleet view (cvo fleet)
fleet-col-context = КОНТЕКСТ
fleet-col-state = СОСТОЯНИЕ
fleet-col-version = ВЕРСИЯ
fleet-col-channel = КАНАЛ
fleet-col-desired = ЦЕЛЬ
fleet-col-progress = ХОД
fleet-col-updates = ОБН
fleet-col-conditional = УСЛ
fleet-col-operators = ОПЕРАТОРЫ
fleet-col-lease = LEASE
fleet-state-unreachable = недоступен
fleet-state-denied = доступ запрещён
fleet-state-failing = сбой
fleet-state-degraded = деградирован
fleet-state-updating = обновляется
fleet-state-no-cv = нет ClusterVersion
fleet-state-connecting = подключение
fleet-state-up-to-date = актуален
fleet-sort-name = имя
fleet-sort-version = версия
fleet-sort-state = состояние
fleet-summary-clusters = { $n } { $n ->
        [one] кластер
        [few] кластера
       *[many] кластеров
    }
fleet-summary-sort = сортировка: { $key }
fleet-summary-filter = фильтр: { $filter } (показано: { $shown })
fleet-cell-conditional = { $n } (риски: { $k })
fleet-cell-operators-ok = ok
fleet-cell-degraded = { $d } дегр.
fleet-cell-unavailable = { $u } недост.
fleet-cell-degraded-unavailable = { $d } дегр., { $u } нед.
fleet-cell-lease-expired = { $h } (истёк)
fleet-detail-updating = обновляется до { $d } ({ $progress })
fleet-detail-connecting = ждём первого ответа API-сервера
fleet-detail-no-cv = нет ClusterVersion: это не кластер OpenShift?
fleet-no-match = ни один кластер не подходит под фильтр (Esc сбрасывает его)
fleet-filter-prompt = фильтр:{" "}
fleet-hint-select = выбор
fleet-hint-open = открыть панель
fleet-hint-filter = фильтр
fleet-hint-sort = сортировка имя/версия/состояние
fleet-hint-clear = сбросить фильтр
fleet-hint-quit = выход
fleet-cannot-open = не удаётся открыть { $context }: { $why }

## Update-health insights as the dashboard shows them (src/assess/insight_text.rs: assess's
## English sentences, oc's for `cvo status`, matched and translated at drawing time). Kinds,
## condition types, reasons, names and versions stay as the API and oc say them.
insight-proceeding-well = Обновление идёт нормально
insight-cv-no-failing = у ClusterVersion { $name } нет условия Failing
insight-cv-failing = ClusterVersion { $name } не может продолжить обновление ({ $reason })
insight-cv-may-be-failing = ClusterVersion { $name }, возможно, не может продолжить обновление ({ $reason })
insight-alert-firing = Сработало оповещение: { $alert }
insight-co-unavailable = Кластерный оператор { $name } недоступен ({ $reason })
insight-co-degraded = Кластерный оператор { $name } деградировал ({ $reason })
insight-paused-pool = Устаревшие узлы приостановленного пула машин '{ $pool }' не будут обновлены
insight-node-not-ready = Узел { $name } не готов
insight-node-disk-pressure = На узле { $name } нехватка диска
insight-node-network = На узле { $name } недоступна сеть
insight-node-degraded = Узел { $name } деградирован
insight-node-unavailable = Узел { $name } недоступен
insight-previous-never-completed = Предыдущее обновление до { $previous } не завершилось, последнее завершённое обновление — { $last }
insight-no-reason = причина не указана
insight-not-accepted = запрошенное обновление до { $target } не принято: { $why }
insight-not-picked-up = запрошенное обновление до { $target } не подхвачено ни одним оператором версии кластера
insight-waiting-release = ожидание загрузки релиза { $image }: его версия пока неизвестна
insight-unknown-time = неизвестное время
insight-waiting-on = ожидание, пока { $name } сообщит { $what }: уже { $waited }
## Update-health insights' descriptions (src/assess/insight_text.rs)
insight-desc-paused-pool = Пул машин на паузе: это останавливает все изменения узлов пула, включая обновления. Узлы не будут обновлены, пока администратор не снимет пул с паузы.
insight-desc-cv-unclear = Текущее состояние синхронизации ClusterVersion неясно. Для отладки см. 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1'.
insight-desc-previous-in-progress = Текущее обновление до { $target } начато, когда предыдущее обновление до версии { $previous } ещё выполнялось
insight-desc-node-condition = У узла условие { $condition } с причиной "{ $reason }" и сообщением { $message }
insight-desc-alert-during = Оповещение начало срабатывать во время обновления.
insight-desc-alert-known-during = Оповещение, которое, как известно, влияет на обновления, начало срабатывать во время обновления.
insight-desc-alert-known-before = Оповещение, которое, как известно, влияет на обновления, срабатывает с момента до начала обновления.
insight-desc-alert-none = {" "}У оповещения нет описания.
insight-desc-alert-text = {" "}Описание оповещения: { $text }
insight-desc-refused = Кластер остаётся на текущем релизе: релиз, запрошенный в spec.desiredUpdate ({ $target }), отклонён оператором версии кластера (ReleaseAccepted=False). Устраните причину (хранилища подписей, доступ к реестру), запросите другой релиз или отмените запрос (cvo upgrade --clear). { $message }
insight-desc-not-picked-up = spec.desiredUpdate запрашивает { $target }, но ни один оператор версии кластера с тех пор не читал ClusterVersion: он на поколении { $generation }, его статус — на { $observed }. Проверьте, что оператор версии кластера работает и держит Lease openshift-cluster-version/version (его журнал говорит, почему он не синхронизирует).
insight-desc-loading = Обновление запрошено по образу, а оператор версии кластера ещё не загрузил релиз (получение, проверка), поэтому ни один оператор не может сообщить его версию и оценить время нельзя.{ $accepted }
insight-desc-waiting-on = Кластерный оператор { $name } сообщает для себя версию { $target }, поэтому oc считает его обновлённым, но оператор версии кластера ждёт, пока будет сообщена каждая версия, перечисленная в манифесте релиза ({ $progressing }). Проверьте операнды и журнал оператора.
